//! Operating the test Redis Cluster from a test, as an operator would with
//! `redis-cli`: its nodes and slot map, the slot a mode's keys sit in (found
//! from the keys that exist, not from the key layout), moving a slot from
//! one master to another (`CLUSTER SETSLOT … IMPORTING/MIGRATING`, `MIGRATE
//! … KEYS` in batches, `CLUSTER SETSLOT … NODE` on every master) and
//! restarting a master with `scripts/redis-cluster restart-node`.
//!
//! A cluster is shared by every cluster test of a `cargo test` run, so the
//! tests that move slots or restart nodes hold [`ClusterLock::exclusive`],
//! and the others [`ClusterLock::shared`] (the pool store's conformance
//! suite takes the shared lock too, on the same file).

use redis::aio::MultiplexedConnection;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The test cluster's URL; panics when it is unset (the store's rule:
/// `matchplane_store::test_support::cluster_url`).
pub fn cluster_url() -> String {
    matchplane_store::test_support::cluster_url()
}

/// An advisory lock (`flock`) on a file beside the test cluster, shared by
/// the tests that only use the cluster and exclusive for those that move
/// its slots or restart its nodes. Released when dropped.
pub struct ClusterLock(#[allow(dead_code)] std::fs::File);

impl ClusterLock {
    /// The lock file: the same path as the store conformance suite's.
    fn path() -> PathBuf {
        matchplane_store::test_support::cluster_lock_path()
    }

    async fn take(exclusive: bool) -> Self {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(Self::path())
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            let taken = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match taken {
                Ok(()) => return Self(file),
                Err(std::fs::TryLockError::WouldBlock) => {
                    assert!(
                        Instant::now() < deadline,
                        "the cluster lock {} stayed taken for 10 minutes",
                        Self::path().display()
                    );
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(std::fs::TryLockError::Error(err)) => panic!("cluster lock: {err}"),
            }
        }
    }

    /// For a test that only uses the cluster.
    pub async fn shared() -> Self {
        Self::take(false).await
    }

    /// For a test that moves slots or restarts nodes.
    pub async fn exclusive() -> Self {
        Self::take(true).await
    }
}

/// One node, from `CLUSTER NODES`.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its node id.
    pub id: String,
    /// `host`.
    pub host: String,
    /// Its client port.
    pub port: u16,
    /// Whether it is a master.
    pub master: bool,
    /// The slot ranges it serves (inclusive).
    pub slots: Vec<(u16, u16)>,
}

impl Node {
    /// `redis://host:port`.
    pub fn url(&self) -> String {
        format!("redis://{}:{}", self.host, self.port)
    }

    /// A connection to this node alone.
    pub async fn conn(&self) -> MultiplexedConnection {
        redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap()
    }

    /// Whether it serves `slot`.
    pub fn serves(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(a, b)| (a..=b).contains(&slot))
    }
}

/// The first node of a cluster URL (`redis+cluster://h:p,h:p` or
/// comma-separated node URLs), as `redis://h:p`.
pub fn seed(cluster_url: &str) -> String {
    matchplane_store::pool::redis::RedisTarget::parse(cluster_url)
        .first_node()
        .to_owned()
}

/// The cluster's nodes as `seed` (a node URL) sees them.
pub async fn nodes(seed: &str) -> Vec<Node> {
    let mut conn = redis::Client::open(seed)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let text: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(&mut conn)
        .await
        .unwrap();
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() < 8 || f[2].contains("fail") {
                return None;
            }
            // `ip:port@cport[,hostname]`
            let addr = f[1].split('@').next()?;
            let (host, port) = addr.rsplit_once(':')?;
            let slots = f[8..]
                .iter()
                .filter(|s| !s.starts_with('['))
                .filter_map(|s| match s.split_once('-') {
                    Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                    None => s.parse().ok().map(|n| (n, n)),
                })
                .collect();
            Some(Node {
                id: f[0].to_owned(),
                host: host.to_owned(),
                port: port.parse().ok()?,
                master: f[2].contains("master"),
                slots,
            })
        })
        .collect()
}

/// The cluster's masters.
pub async fn masters(seed: &str) -> Vec<Node> {
    nodes(seed).await.into_iter().filter(|n| n.master).collect()
}

/// The keys on `node` matching `pattern` (a SCAN of that node only).
pub async fn scan(node: &Node, pattern: &str) -> Vec<String> {
    let mut conn = node.conn().await;
    let mut cursor: u64 = 0;
    let mut keys = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .unwrap();
        keys.extend(batch);
        if next == 0 {
            return keys;
        }
        cursor = next;
    }
}

/// The slot of `key`, asked of `node` (`CLUSTER KEYSLOT`).
pub async fn keyslot(node: &Node, key: &str) -> u16 {
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(&mut node.conn().await)
        .await
        .unwrap()
}

/// The slot holding mode `mode`'s pool under `prefix`, from the keys that
/// exist: every master is scanned for `<prefix>:*<mode>*:pool` (the pool is
/// tagged by project today and may be tagged by project and mode, or not at
/// all, tomorrow), and each key found asked its slot. Waits (at most
/// `within`) until such a key exists (a pool exists while it has a search);
/// panics if the keys found sit in more than one slot.
pub async fn mode_slot(seed: &str, prefix: &str, mode: &str, within: Duration) -> u16 {
    let pattern = format!("{prefix}:*{mode}*:pool");
    let deadline = Instant::now() + within;
    loop {
        let mut slots = std::collections::BTreeSet::new();
        let mut found = Vec::new();
        for master in masters(seed).await {
            for key in scan(&master, &pattern).await {
                slots.insert(keyslot(&master, &key).await);
                found.push(key);
            }
        }
        assert!(
            slots.len() <= 1,
            "{found:?} sit in several slots: {slots:?}"
        );
        if let Some(slot) = slots.into_iter().next() {
            return slot;
        }
        assert!(
            Instant::now() < deadline,
            "no key matches {pattern} on any master"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The master serving `slot`, as `seed` sees it.
pub async fn owner(seed: &str, slot: u16) -> Node {
    masters(seed)
        .await
        .into_iter()
        .find(|n| n.serves(slot))
        .unwrap_or_else(|| panic!("no master serves slot {slot}"))
}

/// A slot being moved from master `from` to master `to` the way `redis-cli
/// --cluster reshard` moves it: [`SlotMove::begin`] has `to` import it and
/// `from` migrate it, each [`SlotMove::step`] sends a batch of its keys over
/// with `MIGRATE … KEYS` (between two steps, clients meet the slot half
/// moved and are answered `ASK` or `TRYAGAIN`), and [`SlotMove::finish`]
/// tells every master that `to` owns it. Blocking (call it from
/// `tokio::task::block_in_place`), so that a move a failed test dropped
/// half done is finished in `Drop`, leaving the cluster whole.
pub struct SlotMove {
    seed: String,
    slot: u16,
    from: Node,
    to: Node,
    src: redis::Connection,
    dst: redis::Connection,
    /// How many keys went over so far.
    pub moved: usize,
    done: bool,
}

fn setslot(slot: u16, state: &str, id: &str) -> redis::Cmd {
    let mut c = redis::cmd("CLUSTER");
    c.arg("SETSLOT").arg(slot).arg(state).arg(id);
    c
}

fn sync_conn(node: &Node) -> redis::Connection {
    redis::Client::open(node.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

impl SlotMove {
    /// Marks `slot` importing on `to` and migrating on `from`.
    pub fn begin(seed: &str, slot: u16, from: &Node, to: &Node) -> Self {
        let mut src = sync_conn(from);
        let mut dst = sync_conn(to);
        let () = setslot(slot, "IMPORTING", &from.id)
            .query(&mut dst)
            .unwrap();
        let () = setslot(slot, "MIGRATING", &to.id).query(&mut src).unwrap();
        Self {
            seed: seed.to_owned(),
            slot,
            from: from.clone(),
            to: to.clone(),
            src,
            dst,
            moved: 0,
            done: false,
        }
    }

    /// Sends up to `batch` of the slot's keys left on `from` to `to`;
    /// returns how many (0: none left).
    pub fn step(&mut self, batch: usize) -> redis::RedisResult<usize> {
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(self.slot)
            .arg(batch)
            .query(&mut self.src)?;
        if keys.is_empty() {
            return Ok(0);
        }
        let _: redis::Value = redis::cmd("MIGRATE")
            .arg(&self.to.host)
            .arg(self.to.port)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(&keys)
            .query(&mut self.src)?;
        self.moved += keys.len();
        Ok(keys.len())
    }

    /// Sends the keys left over in batches of `batch` (for at most a
    /// minute: keys may be added meanwhile), then assigns the slot to `to`
    /// on every master: the new owner first, then the old one, then the
    /// rest. Returns how many keys moved in all.
    pub fn finish(mut self, batch: usize) -> usize {
        self.complete(batch).unwrap();
        self.moved
    }

    fn complete(&mut self, batch: usize) -> redis::RedisResult<()> {
        self.done = true;
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.step(batch)? > 0 {
            assert!(
                Instant::now() < deadline,
                "slot {} never emptied",
                self.slot
            );
        }
        let (slot, to) = (self.slot, self.to.id.clone());
        let () = setslot(slot, "NODE", &to).query(&mut self.dst)?;
        let () = setslot(slot, "NODE", &to).query(&mut self.src)?;
        let text: String = redis::cmd("CLUSTER").arg("NODES").query(&mut self.dst)?;
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let Some(addr) = f.get(1).and_then(|a| a.split('@').next()) else {
                continue;
            };
            let master = f.get(2).is_some_and(|flags| flags.contains("master"));
            if master && f[0] != self.from.id && f[0] != to {
                let mut other = redis::Client::open(format!("redis://{addr}"))?.get_connection()?;
                let () = setslot(slot, "NODE", &to).query(&mut other)?;
            }
        }
        Ok(())
    }
}

impl Drop for SlotMove {
    /// A move left half done (a failed assertion) is completed, so the
    /// cluster serves every slot again for the other tests.
    fn drop(&mut self) {
        if !self.done {
            if let Err(err) = self.complete(100) {
                eprintln!(
                    "could not complete the move of slot {} ({}): run redis-cli --cluster fix {}",
                    self.slot, err, self.seed
                );
            }
        }
    }
}

/// Waits (at most `within`) until every master of the cluster says
/// `cluster_state:ok` and all agree who serves `slot`; returns that master.
pub async fn settled(seed: &str, slot: u16, within: Duration) -> Node {
    let deadline = Instant::now() + within;
    loop {
        let masters = masters(seed).await;
        let mut ok = !masters.is_empty();
        let mut owners = std::collections::BTreeSet::new();
        for m in &masters {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query_async(&mut m.conn().await)
                .await
                .unwrap_or_default();
            ok &= info.lines().any(|l| l.trim() == "cluster_state:ok");
            let seen = nodes(&m.url()).await;
            owners.insert(
                seen.iter()
                    .find(|n| n.master && n.serves(slot))
                    .map(|n| n.id.clone()),
            );
        }
        if ok && owners.len() == 1 {
            return owner(seed, slot).await;
        }
        assert!(
            Instant::now() < deadline,
            "the cluster did not settle (ok: {ok}, owners of {slot}: {owners:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Makes sure `node` writes an append-only file (turning it on at run time
/// when the cluster was started without), so a restart keeps its data, as
/// docs/operations.md requires of a production Redis.
pub async fn ensure_aof(node: &Node) {
    let mut conn = node.conn().await;
    let (_, on): (String, String) = redis::cmd("CONFIG")
        .arg("GET")
        .arg("appendonly")
        .query_async(&mut conn)
        .await
        .unwrap();
    if on == "yes" {
        return;
    }
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendonly")
        .arg("yes")
        .query_async(&mut conn)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("persistence")
            .query_async(&mut conn)
            .await
            .unwrap();
        let has = |l: &str| info.lines().any(|x| x.trim() == l);
        if has("aof_enabled:1")
            && has("aof_rewrite_in_progress:0")
            && has("aof_rewrite_scheduled:0")
        {
            return;
        }
        assert!(Instant::now() < deadline, "AOF never came on: {info}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Kills master `node` (SIGKILL: a crash, no shutdown) and starts it again
/// on its port with its `nodes.conf` and append-only file
/// (`scripts/redis-cluster restart-node`, told the cluster's directory and
/// ports, read from the nodes themselves); returns once the script saw
/// `cluster_state:ok` on every node.
pub async fn restart(seed: &str, node: &Node) {
    let mut conn = node.conn().await;
    let server: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut conn)
        .await
        .unwrap();
    let pid = server
        .lines()
        .find_map(|l| l.trim().strip_prefix("process_id:"))
        .unwrap()
        .to_owned();
    let (_, dir): (String, String) = redis::cmd("CONFIG")
        .arg("GET")
        .arg("dir")
        .query_async(&mut conn)
        .await
        .unwrap();
    // scripts/redis-cluster keeps node PORT in <REDIS_CLUSTER_DIR>/<PORT>.
    let dir = PathBuf::from(dir);
    assert_eq!(
        dir.file_name().and_then(|n| n.to_str()),
        Some(node.port.to_string().as_str()),
        "not a node started by scripts/redis-cluster: {}",
        dir.display()
    );
    let cluster_dir = dir.parent().unwrap().to_owned();
    let ports: Vec<String> = masters(seed)
        .await
        .iter()
        .map(|n| n.port.to_string())
        .collect();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/redis-cluster");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    assert!(killed.success(), "kill -KILL {pid}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while redis::Client::open(node.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .is_ok()
    {
        assert!(Instant::now() < deadline, "{} outlived SIGKILL", node.port);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let port = node.port.to_string();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(script)
            .args(["restart-node", &port])
            .env("REDIS_CLUSTER_DIR", cluster_dir)
            .env("REDIS_CLUSTER_PORTS", ports.join(" "))
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "restart-node {}: {}",
        node.port,
        String::from_utf8_lossy(&out.stderr)
    );
}
