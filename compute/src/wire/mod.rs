//! The PostgreSQL wire front end (pgwire): it only speaks the protocol.
//! Startup with SCRAM-SHA-256 against users in meta ([`auth`]), the simple
//! ([`simple`]) and extended ([`extended`]) query protocols, COPY data
//! ([`copy`]), cancel requests, and encoding of replies and errors
//! ([`response`]). Statements are planned by `plan` and run by `exec`;
//! errors become ErrorResponses here and only here.

mod auth;
mod copy;
mod extended;
mod listen;
pub mod response;
mod simple;

use std::sync::Arc;

use pgwire::api::auth::sasl::scram::ScramAuth;
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::DefaultServerParameterProvider;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::{ClientInfo, PgWireServerHandlers};
use shard_router::Router;

use crate::scram::SCRAM_ITERATIONS;
use crate::session::Session;
use auth::MetaAuth;
use extended::TesseraParser;

pub use listen::socket_path;
pub use response::to_pg_error;

/// Client metadata key holding the session's current schema, so Parse
/// resolves names where the session would.
const SCHEMA_METADATA: &str = "tessera.current_schema";

/// Per-connection handlers: they own the session.
pub struct ConnHandlers {
    router: Arc<Router>,
    session: tokio::sync::Mutex<Option<Session>>,
    parser: Arc<TesseraParser>,
}

impl ConnHandlers {
    async fn session<'a, C: ClientInfo>(
        &'a self,
        client: &C,
    ) -> tokio::sync::MutexGuard<'a, Option<Session>> {
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            let md = client.metadata();
            let user = md.get("user").cloned().unwrap_or_default();
            let db = md.get("database").cloned().unwrap_or_else(|| user.clone());
            let superuser = crate::privileges::is_superuser(&self.router.catalog(), &user);
            let mut s = Session::new(
                self.router.clone(),
                self.parser.statements.clone(),
                db,
                user,
            );
            s.settings.insert(
                "is_superuser".into(),
                if superuser { "on" } else { "off" }.into(),
            );
            let (pid, secret) = client.pid_and_secret_key();
            s.pid = pid;
            s.interrupt = crate::cancel::register(pid, secret);
            // ALTER SYSTEM's values first: the client's come after them.
            s.apply_system_settings(&self.router.catalog());
            if let Some(app) = md.get("application_name") {
                s.settings.insert("application_name".into(), app.clone());
                s.settings.sources.insert(
                    "application_name".into(),
                    crate::session::settings::Source::Client,
                );
            }
            s.activity = Some(crate::activity::begin(
                pid,
                &s.user,
                &s.database,
                md.get("application_name").map_or("", |a| a.as_str()),
                Some(client.socket_addr()),
            ));
            // Settings given at startup, as PostgreSQL applies them: a
            // `TimeZone` parameter (pgjdbc sends the JVM's zone) and
            // `options` (`-c name=value`, libpq's PGOPTIONS). One Tessera
            // cannot take is left at its default.
            let mut startup: Vec<(String, String)> = vec![];
            if let Some(tz) = md.get("TimeZone") {
                startup.push(("timezone".into(), tz.clone()));
            }
            if let Some(opts) = md.get("options") {
                startup.extend(startup_options(opts));
            }
            for (k, v) in startup {
                if let Err(e) = s.set_at_start(&k, &v) {
                    tracing::debug!("startup setting {k}={v} not applied: {e}");
                }
            }
            s.startup_settings = s.settings.clone();
            s.publish_settings();
            *guard = Some(s);
        }
        guard
    }
}

/// Backend pids and secret keys, one generator for the whole node: the
/// handler made per connection would otherwise count pids from the same
/// start, and every session would have pid 100000 (cancel requests and
/// shields are found by pid, see `compute::cancel`).
static BACKEND_KEYS: std::sync::LazyLock<Arc<pgwire::api::RandomPidSecretKeyGenerator>> =
    std::sync::LazyLock::new(Default::default);

/// A failed SCRAM login as PostgreSQL reports it: pgwire names the user of
/// the SCRAM message, which clients send empty (the startup packet has it).
struct LoginErrors;

impl pgwire::api::ErrorHandler for LoginErrors {
    fn on_error<C: ClientInfo>(&self, client: &C, error: &mut pgwire::error::PgWireError) {
        if let pgwire::error::PgWireError::InvalidPassword(_) = error {
            let user = client.metadata().get("user").cloned().unwrap_or_default();
            *error =
                pgwire::error::PgWireError::UserError(Box::new(pgwire::error::ErrorInfo::new(
                    "FATAL".into(),
                    "28P01".into(),
                    format!("password authentication failed for user \"{user}\""),
                )));
        }
    }
}

pub struct Factory {
    handlers: Arc<ConnHandlers>,
    router: Arc<Router>,
}

impl PgWireServerHandlers for Factory {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.handlers.clone()
    }
    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.handlers.clone()
    }
    fn startup_handler(&self) -> Arc<impl pgwire::api::auth::StartupHandler> {
        let mut scram = ScramAuth::new(Arc::new(MetaAuth {
            router: self.router.clone(),
        }));
        scram.set_iterations(SCRAM_ITERATIONS);
        let mut params = DefaultServerParameterProvider::default();
        params.server_version = crate::SERVER_VERSION.to_string();
        params.date_style = "ISO, MDY".to_string();
        params.time_zone = "UTC".to_string();
        Arc::new(
            // No connection manager: pgwire would cancel by dropping the
            // handler's future (see `compute::cancel`).
            SASLAuthStartupHandler::new(Arc::new(params))
                .with_scram(scram)
                .with_pid_secret_key_generator(BACKEND_KEYS.clone()),
        )
    }
    fn copy_handler(&self) -> Arc<impl pgwire::api::copy::CopyHandler> {
        self.handlers.clone()
    }
    fn error_handler(&self) -> Arc<impl pgwire::api::ErrorHandler> {
        Arc::new(LoginErrors)
    }
    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        Arc::new(crate::cancel::TesseraCancelHandler)
    }
}

/// Accepts connections forever.
/// Serves clients on `listen` (TCP) and, with `unix_dir`, on the Unix
/// socket of the same port in that directory ([`listen`]).
pub async fn serve(
    router: Arc<Router>,
    listen: &str,
    unix_dir: Option<&std::path::Path>,
) -> std::io::Result<()> {
    let _ = crate::NODE_START_SETTINGS.set(router.catalog().system_settings.clone());
    let listeners = listen::Listeners::bind(listen, unix_dir).await?;
    tracing::info!("listening on {listen}");
    let parser = Arc::new(TesseraParser {
        router: router.clone(),
        statements: Default::default(),
    });
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut last_warning = std::time::Instant::now() - std::time::Duration::from_secs(60);
    loop {
        let socket = match listeners.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of
                // spinning (and logging) in a tight loop.
                if last_warning.elapsed() > std::time::Duration::from_secs(10) {
                    tracing::warn!("accept failed: {e}");
                    last_warning = std::time::Instant::now();
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let max = crate::MAX_CONNECTIONS.load(std::sync::atomic::Ordering::Relaxed);
        if open.fetch_add(1, std::sync::atomic::Ordering::AcqRel) >= max {
            open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            tokio::spawn(socket.refuse(fatal_error("53300", "sorry, too many clients already")));
            continue;
        }
        let handlers = Arc::new(ConnHandlers {
            router: router.clone(),
            session: tokio::sync::Mutex::new(None),
            parser: parser.clone(),
        });
        tokio::spawn(idle_watchdog(Arc::downgrade(&handlers)));
        let ended = handlers.clone();
        let factory = Arc::new(Factory {
            handlers,
            router: router.clone(),
        });
        let open = open.clone();
        tokio::spawn(async move {
            // The session's time zone and float digits live in the
            // connection's task.
            let serve = async move {
                match socket {
                    listen::Accepted::Tcp(s) => {
                        pgwire::tokio::process_socket(s, None, factory).await
                    }
                    listen::Accepted::Unix(mut s) => {
                        listen::refuse_encryption(&mut s).await?;
                        pgwire::tokio::process_socket_unix(s, factory).await
                    }
                }
            };
            let serve = crate::pgtext::with_float_digits(serve);
            if let Err(e) = common::tz::with_session_zone(serve).await {
                tracing::debug!("connection ended: {e}");
            }
            // An open block rolls back and its DDL is undone.
            let session = ended.session.lock().await.take();
            if let Some(s) = session {
                s.close().await;
            }
            open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        });
    }
}

/// `idle_in_transaction_session_timeout`: a session idle inside a
/// transaction block for longer has its transaction rolled back at once
/// (freeing its shard connections and row locks for everyone else) and is
/// terminated: its next statement gets FATAL 25P03 and the connection
/// closes, as in PostgreSQL.
async fn idle_watchdog(handlers: std::sync::Weak<ConnHandlers>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let Some(h) = handlers.upgrade() else {
            return;
        };
        // Locked: a statement is running, so the session is not idle.
        let Ok(mut guard) = h.session.try_lock() else {
            continue;
        };
        let Some(s) = guard.as_mut() else {
            continue;
        };
        let Some(limit) = s.idle_in_transaction_timeout() else {
            continue;
        };
        if s.txn.is_some() && s.copy_in.is_none() && !s.streaming() && s.idle_for() > limit {
            if let Some(t) = s.terminate() {
                let router = h.router.clone();
                tokio::spawn(async move {
                    let _ = t.finish_detached(router, false).await;
                });
            }
        }
    }
}

/// A FATAL ErrorResponse as raw bytes, for refusing a connection before
/// any protocol handling (PostgreSQL answers an over-limit connection's
/// startup this way).
fn fatal_error(code: &str, message: &str) -> Vec<u8> {
    let mut body = vec![];
    for (t, v) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', code),
        (b'M', message),
    ] {
        body.push(t);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut out = vec![b'E'];
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// The `name=value` settings of a startup `options` string: `-c name=value`,
/// `-cname=value` or `--name=value`, separated by blanks.
fn startup_options(opts: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut words = opts.split_whitespace();
    while let Some(w) = words.next() {
        let pair = if w == "-c" {
            words.next()
        } else {
            w.strip_prefix("-c").or_else(|| w.strip_prefix("--"))
        };
        if let Some((k, v)) = pair.and_then(|p| p.split_once('=')) {
            out.push((k.replace('-', "_").to_ascii_lowercase(), v.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn startup_options_read_as_libpq_sends_them() {
        assert_eq!(
            super::startup_options(
                "-c TimeZone=Asia/Kolkata -cstatement_timeout=5s --lock-timeout=1s x"
            ),
            vec![
                ("timezone".to_string(), "Asia/Kolkata".to_string()),
                ("statement_timeout".to_string(), "5s".to_string()),
                ("lock_timeout".to_string(), "1s".to_string()),
            ]
        );
    }
}
