//! The node's sessions as `pg_stat_activity` shows them: who, from where,
//! `application_name`, what each runs and since when. Each session
//! records itself in its own [`Slot`] (its own lock, taken at a statement's
//! start and end); the catalog reads a copy of every slot.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use parking_lot::Mutex;

#[derive(Debug, Clone)]
pub struct Activity {
    pub pid: i32,
    pub user: String,
    pub database: String,
    pub application_name: String,
    pub client_addr: Option<String>,
    pub client_port: Option<i32>,
    pub backend_start: DateTime<Utc>,
    pub xact_start: Option<DateTime<Utc>>,
    pub query_start: Option<DateTime<Utc>>,
    pub state_change: DateTime<Utc>,
    /// `active`, `idle`, `idle in transaction`, `idle in transaction
    /// (aborted)`.
    pub state: &'static str,
    /// The last statement's text (the running one's when active).
    pub query: Arc<str>,
    /// The session's settings, for its `pg_settings`.
    pub settings: Arc<BTreeMap<String, SettingRow>>,
}

/// One setting of a session as `pg_settings` shows it.
#[derive(Debug, Clone)]
pub struct SettingRow {
    /// As SHOW prints it.
    pub value: String,
    /// `pg_settings.source`.
    pub source: &'static str,
    /// What RESET goes back to (`None`: the default).
    pub reset: Option<String>,
}

/// One session's entry: the session holds it and updates it at each
/// statement's start and end under its own lock; the node's map is locked
/// only when a session begins or ends and when the catalog reads it.
#[derive(Clone)]
pub struct Slot(Arc<Mutex<Activity>>);

static SESSIONS: Mutex<BTreeMap<i32, Slot>> = Mutex::new(BTreeMap::new());

/// A session started: its entry.
pub fn begin(
    pid: i32,
    user: &str,
    database: &str,
    application_name: &str,
    client: Option<std::net::SocketAddr>,
) -> Slot {
    let now = Utc::now();
    let slot = Slot(Arc::new(Mutex::new(Activity {
        pid,
        user: user.to_string(),
        database: database.to_string(),
        application_name: application_name.to_string(),
        client_addr: client.map(|a| a.ip().to_string()),
        client_port: client.map(|a| a.port() as i32),
        backend_start: now,
        xact_start: None,
        query_start: None,
        state_change: now,
        state: "idle",
        query: Arc::from(""),
        settings: Default::default(),
    })));
    SESSIONS.lock().insert(pid, slot.clone());
    slot
}

/// A session ended.
pub fn end(pid: i32) {
    SESSIONS.lock().remove(&pid);
}

impl Slot {
    /// A statement started (`xact_start`: its transaction's start).
    pub fn statement_started(&self, query: &Arc<str>, xact_start: DateTime<Utc>) {
        let now = Utc::now();
        let mut a = self.0.lock();
        a.state = "active";
        a.query = query.clone();
        a.query_start = Some(now);
        a.state_change = now;
        a.xact_start = Some(xact_start);
    }

    /// A statement ended; the session is now in a transaction (`failed`:
    /// an aborted one) or not.
    pub fn statement_ended(&self, in_transaction: bool, failed: bool) {
        let now = Utc::now();
        let mut a = self.0.lock();
        a.state = match (in_transaction, failed) {
            (false, _) => "idle",
            (true, false) => "idle in transaction",
            (true, true) => "idle in transaction (aborted)",
        };
        if !in_transaction {
            a.xact_start = None;
        }
        a.state_change = now;
    }

    pub fn set_settings(&self, settings: Arc<BTreeMap<String, SettingRow>>) {
        self.0.lock().settings = settings;
    }

    pub fn set_application_name(&self, name: &str) {
        self.0.lock().application_name = name.to_string();
    }
}

/// The settings session `pid` published (none for a session of no
/// connection).
pub fn settings_of(pid: i32) -> Option<Arc<BTreeMap<String, SettingRow>>> {
    let slot = SESSIONS.lock().get(&pid).cloned()?;
    let settings = slot.0.lock().settings.clone();
    Some(settings)
}

/// Every session of this node.
pub fn sessions() -> Vec<Activity> {
    let slots: Vec<Slot> = SESSIONS.lock().values().cloned().collect();
    slots.iter().map(|s| s.0.lock().clone()).collect()
}
