//! The cost ledger: what one client transaction costs each process class
//! (client, haproxy, compute nodes, shard and meta `mariadbd`, or the
//! single-server baseline), as CPU time from `/proc` over a measured run,
//! and what each MariaDB server was asked to do for it, from its global
//! status counters (`Questions`, `Com_*`, handler reads).
//!
//! CPU per transaction is far steadier than TPS on a shared machine: a
//! neighbour slows every process, but it does not make a point select cost
//! a shard more CPU. It is the figure issue 31 drives down.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `/proc` reports CPU time in USER_HZ, which is 100 on every Linux
/// architecture Tessera runs on.
const TICKS_PER_SECOND: f64 = 100.0;

/// The MariaDB status counters a ledger records. `Handler_read` is the sum
/// of every `Handler_read_*` (rows the storage engine was asked for).
const COUNTERS: &[&str] = &[
    "Questions",
    "Com_stmt_execute",
    "Com_stmt_prepare",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_begin",
    "Com_commit",
    "Com_rollback",
    "Com_set_option",
    "Com_xa_start",
    "Com_xa_prepare",
    "Com_xa_commit",
    "Handler_read",
];

/// How one process's CPU time is read.
#[derive(Debug, Clone)]
enum Proc {
    /// A process and all its threads (mariadbd, a compute node, haproxy).
    Pid(u32),
    /// A forking server (PostgreSQL's postmaster): its own time, its reaped
    /// children's and its live children's.
    Forking(u32),
    /// This benchmark's own child processes (the sysbench client).
    Children,
    /// This benchmark process itself (a built-in driver such as tpcc's).
    Myself,
}

/// The `mariadb` command-line client's arguments for one server.
#[derive(Debug, Clone)]
struct Server {
    args: Vec<String>,
}

/// What a ledger watches: processes by class and MariaDB servers by class.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    procs: Vec<(String, Proc)>,
    servers: Vec<(String, Server)>,
}

/// The readings at one moment.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// CPU ticks per class.
    cpu: BTreeMap<String, u64>,
    /// Counters per server class, summed over that class's servers.
    counters: BTreeMap<String, BTreeMap<String, u64>>,
    /// How many servers of each class were read (each read is itself one
    /// `Questions`).
    servers: BTreeMap<String, u64>,
}

/// Per client transaction: microseconds of CPU per process class (and
/// `servers`, every class but the client), and each server class's
/// counters (`shard.Questions`, `meta.Com_select`, ...).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Ledger {
    pub transactions: f64,
    pub cpu_us: BTreeMap<String, f64>,
    pub per_txn: BTreeMap<String, f64>,
}

impl Watch {
    /// A Tessera cluster's processes and servers, from `tessera cluster
    /// status --json`; the client is this benchmark's children.
    pub fn tessera(status: &serde_json::Value, client: bool) -> Watch {
        let mut w = Watch::default();
        for n in status.as_array().into_iter().flatten() {
            let role = n["role"].as_str().unwrap_or_default().to_string();
            if let Some(pid) = n["pid"].as_u64() {
                w.procs.push((role.clone(), Proc::Pid(pid as u32)));
            }
            if role == "shard" || role == "meta" {
                let args = vec![
                    "--protocol=tcp".into(),
                    "-h127.0.0.1".into(),
                    format!("-P{}", n["port"].as_u64().unwrap_or(0)),
                    format!("-u{}", n["user"].as_str().unwrap_or_default()),
                    format!("-p{}", n["password"].as_str().unwrap_or_default()),
                ];
                w.servers.push((role, Server { args }));
            }
        }
        w.with_client(client)
    }

    /// One MariaDB reached through its socket as root.
    pub fn mariadb(pid: u32, socket: &Path, client: bool) -> Watch {
        let mut w = Watch::default();
        w.procs.push(("mariadb".into(), Proc::Pid(pid)));
        let args = vec![format!("--socket={}", socket.display()), "-uroot".into()];
        w.servers.push(("mariadb".into(), Server { args }));
        w.with_client(client)
    }

    /// The same, with more processes of a class (a baseline's replicas).
    pub fn and_procs(mut self, class: &str, pids: &[u32]) -> Watch {
        for pid in pids {
            self.procs.push((class.into(), Proc::Pid(*pid)));
        }
        self
    }

    /// One PostgreSQL, by its postmaster.
    pub fn postgres(postmaster: u32, client: bool) -> Watch {
        let mut w = Watch::default();
        w.procs.push(("postgres".into(), Proc::Forking(postmaster)));
        w.with_client(client)
    }

    /// `client`: the client is this benchmark's children (sysbench);
    /// otherwise this process (a built-in driver).
    fn with_client(mut self, children: bool) -> Watch {
        let p = if children {
            Proc::Children
        } else {
            Proc::Myself
        };
        self.procs.push(("client".into(), p));
        self
    }

    /// The readings that open a run: counters first, then CPU, so the
    /// status reads' own cost (the `mariadb` client is a child process,
    /// and each server answers it) falls outside the run.
    pub fn start(&self) -> Sample {
        let mut s = Sample::default();
        self.read_counters(&mut s);
        self.read_cpu(&mut s);
        s
    }

    /// The readings that close a run: CPU first, then counters.
    pub fn stop(&self) -> Sample {
        let mut s = Sample::default();
        self.read_cpu(&mut s);
        self.read_counters(&mut s);
        s
    }

    fn read_cpu(&self, s: &mut Sample) {
        for (class, p) in &self.procs {
            *s.cpu.entry(class.clone()).or_default() += ticks(p);
        }
    }

    fn read_counters(&self, s: &mut Sample) {
        for (class, server) in &self.servers {
            let c = s.counters.entry(class.clone()).or_default();
            for (k, v) in status(server) {
                *c.entry(k).or_default() += v;
            }
            *s.servers.entry(class.clone()).or_default() += 1;
        }
    }
}

impl Ledger {
    /// The cost of `transactions` client transactions between two samples.
    pub fn between(before: &Sample, after: &Sample, transactions: f64) -> Ledger {
        let txns = transactions.max(1.0);
        let mut l = Ledger {
            transactions,
            ..Default::default()
        };
        let mut servers = 0.0;
        for (class, t) in &after.cpu {
            let d = t.saturating_sub(before.cpu.get(class).copied().unwrap_or(0)) as f64;
            let us = d / TICKS_PER_SECOND * 1e6 / txns;
            if class != "client" {
                servers += us;
            }
            l.cpu_us.insert(class.clone(), us);
        }
        l.cpu_us.insert("servers".into(), servers);
        for (class, c) in &after.counters {
            let b = before.counters.get(class);
            for (k, v) in c {
                let mut d = v.saturating_sub(b.and_then(|b| b.get(k)).copied().unwrap_or(0));
                if k == "Questions" {
                    // The status read that took `after` counted itself.
                    d = d.saturating_sub(after.servers.get(class).copied().unwrap_or(0));
                }
                l.per_txn.insert(format!("{class}.{k}"), d as f64 / txns);
            }
        }
        l
    }

    /// One line: CPU us per transaction by class, then statements.
    pub fn line(&self) -> String {
        let order = [
            "client", "haproxy", "compute", "shard", "replica", "meta", "mariadb", "postgres",
            "servers",
        ];
        let cpu: Vec<String> = order
            .iter()
            .filter_map(|c| self.cpu_us.get(*c).map(|v| format!("{c} {v:.0}")))
            .collect();
        let mut out = format!("cpu us/txn: {}", cpu.join(", "));
        for class in ["shard", "meta", "mariadb"] {
            let get = |k: &str| {
                self.per_txn
                    .get(&format!("{class}.{k}"))
                    .copied()
                    .unwrap_or(0.0)
            };
            if self.per_txn.contains_key(&format!("{class}.Questions")) {
                out.push_str(&format!(
                    "; {class} stmts/txn {:.2} (execute {:.2}, handler reads {:.1})",
                    get("Questions"),
                    get("Com_stmt_execute"),
                    get("Handler_read")
                ));
            }
        }
        out
    }
}

/// CPU ticks of one watched process (0 once it is gone).
fn ticks(p: &Proc) -> u64 {
    match p {
        Proc::Pid(pid) => stat(&format!("/proc/{pid}/stat"))
            .map(|f| f.utime + f.stime)
            .unwrap_or(0),
        Proc::Myself => stat("/proc/self/stat")
            .map(|f| f.utime + f.stime)
            .unwrap_or(0),
        Proc::Children => stat("/proc/self/stat")
            .map(|f| f.cutime + f.cstime)
            .unwrap_or(0),
        Proc::Forking(pid) => {
            let own = stat(&format!("/proc/{pid}/stat"))
                .map(|f| f.utime + f.stime + f.cutime + f.cstime)
                .unwrap_or(0);
            own + live_children(*pid)
        }
    }
}

/// The CPU ticks of a process's live children (a postmaster's backends).
fn live_children(parent: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| stat(&e.path().join("stat").to_string_lossy()))
        .filter(|f| f.ppid == parent)
        .map(|f| f.utime + f.stime)
        .sum()
}

struct Stat {
    ppid: u32,
    utime: u64,
    stime: u64,
    cutime: u64,
    cstime: u64,
}

/// Fields of `/proc/PID/stat` (proc(5)); the command name in parentheses
/// may hold spaces, so fields are counted after its closing parenthesis.
fn stat(path: &str) -> Option<Stat> {
    let text = std::fs::read_to_string(path).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state), so field n is f[n - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    Some(Stat {
        ppid: num(4)? as u32,
        utime: num(14)?,
        stime: num(15)?,
        cutime: num(16)?,
        cstime: num(17)?,
    })
}

/// The ledger's counters of one MariaDB server (empty if it cannot be
/// read).
fn status(server: &Server) -> BTreeMap<String, u64> {
    let out = Command::new("mariadb")
        .args(&server.args)
        .args(["-N", "-B", "-e", "SHOW GLOBAL STATUS"])
        .output();
    match out {
        Ok(o) if o.status.success() => parse_status(&String::from_utf8_lossy(&o.stdout)),
        _ => BTreeMap::new(),
    }
}

fn parse_status(text: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('\t') else {
            continue;
        };
        let Ok(v) = v.trim().parse::<u64>() else {
            continue;
        };
        let key = if k.starts_with("Handler_read_") {
            "Handler_read"
        } else if COUNTERS.contains(&k) {
            k
        } else {
            continue;
        };
        *m.entry(key.to_string()).or_default() += v;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_spaces() {
        let s = "42 (my (odd) name) S 7 42 42 0 -1 4194560 100 0 0 0 250 30 5 6 20 0 1 0 10 0 0";
        let f = parse_stat(s).expect("parses");
        assert_eq!(
            (f.ppid, f.utime, f.stime, f.cutime, f.cstime),
            (7, 250, 30, 5, 6)
        );
    }

    #[test]
    fn status_sums_handler_reads_and_keeps_only_ledger_counters() {
        let m = parse_status(
            "Questions\t10\nHandler_read_key\t3\nHandler_read_next\t4\nUptime\t99\nCom_select\t2\n",
        );
        assert_eq!(m.get("Questions"), Some(&10));
        assert_eq!(m.get("Handler_read"), Some(&7));
        assert_eq!(m.get("Com_select"), Some(&2));
        assert!(!m.contains_key("Uptime"));
    }

    #[test]
    fn ledger_divides_by_transactions_and_discounts_its_own_status_reads() {
        let mut before = Sample::default();
        let mut after = Sample::default();
        before.cpu.insert("shard".into(), 100);
        after.cpu.insert("shard".into(), 300);
        after.cpu.insert("client".into(), 50);
        before.cpu.insert("client".into(), 0);
        before
            .counters
            .entry("shard".into())
            .or_default()
            .insert("Questions".into(), 10);
        after
            .counters
            .entry("shard".into())
            .or_default()
            .insert("Questions".into(), 213);
        after.servers.insert("shard".into(), 3);
        let l = Ledger::between(&before, &after, 200.0);
        // 200 ticks = 2 s over 200 transactions.
        assert_eq!(l.cpu_us["shard"], 10_000.0);
        assert_eq!(l.cpu_us["servers"], 10_000.0);
        assert_eq!(l.cpu_us["client"], 2_500.0);
        assert_eq!(l.per_txn["shard.Questions"], 1.0);
    }
}
