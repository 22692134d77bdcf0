//! The readiness probe on a Redis Cluster that is down
//! (docs/operations.md, 'Readiness'): with one of three masters killed
//! and the cluster's state `fail`, every data command is refused
//! (`CLUSTERDOWN`), and the probe must fail with them.
//!
//! The test starts its own three-master cluster (free ports, a temporary
//! directory, `redis-server` and `redis-cli` from the PATH, as
//! `scripts/redis-cluster` does), since it kills a node: the shared test
//! cluster stays untouched.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tests::ticket;
use super::{RedisTicketStore, TicketStore};
use crate::pool::{RedisPoolConfig, RedisPoolStore};

/// A three-master Redis Cluster of this test's own, stopped and deleted
/// on drop.
struct OwnCluster {
    dir: std::path::PathBuf,
    nodes: Vec<(u16, Option<Child>)>,
}

impl OwnCluster {
    fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("matchplane-probe-{}", ulid::Ulid::new()));
        let mut cluster = Self {
            dir,
            nodes: Vec::new(),
        };
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let dir = cluster.dir.join(port.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "500"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server on the PATH");
            cluster.nodes.push((port, Some(child)));
        }
        for (port, _) in &cluster.nodes {
            cluster.until(*port, "PONG", &["PING"]);
        }
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(cluster.nodes.iter().map(|(p, _)| format!("127.0.0.1:{p}")))
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .status()
            .expect("redis-cli on the PATH");
        assert!(created.success(), "redis-cli --cluster create");
        for (port, _) in &cluster.nodes {
            cluster.until(*port, "cluster_state:ok", &["CLUSTER", "INFO"]);
        }
        cluster
    }

    fn url(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|(p, _)| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+cluster://{}", hosts.join(","))
    }

    /// Waits (10 s at most) until node `port` answers `command` with a
    /// text holding `want`.
    fn until(&self, port: u16, want: &str, command: &[&str]) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = Command::new("redis-cli")
                .args(["-h", "127.0.0.1", "-p", &port.to_string()])
                .args(command)
                .output()
                .expect("redis-cli on the PATH");
            if String::from_utf8_lossy(&out.stdout).contains(want) {
                return;
            }
            assert!(Instant::now() < deadline, "{port} never said {want}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills node `index` (SIGKILL: a crash).
    fn kill(&mut self, index: usize) {
        if let Some(mut child) = self.nodes[index].1.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.nodes {
            if let Some(mut child) = child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_on_a_cluster_that_is_down() {
    let mut cluster = tokio::task::block_in_place(OwnCluster::start);
    let mut config = RedisPoolConfig::new(cluster.url());
    config.prefix = format!("mpt_{}", ulid::Ulid::new());
    let pool = RedisPoolStore::connect(config).await.unwrap();
    let tickets = RedisTicketStore::new(pool);
    tickets.ping().await.unwrap();
    tickets
        .create(&ticket("tkt_1", "p1"), 1000.0)
        .await
        .unwrap();

    cluster.kill(1);
    let live = cluster.nodes[0].0;
    tokio::task::block_in_place(|| cluster.until(live, "cluster_state:fail", &["CLUSTER", "INFO"]));
    // What the players meet: a ticket is refused.
    let refused = tokio::time::timeout(
        Duration::from_secs(30),
        tickets.create(&ticket("tkt_2", "p2"), 1000.0),
    )
    .await
    .expect("an answer within 30 s");
    assert!(refused.is_err(), "a ticket on a cluster that is down");
    // And what readiness says.
    let probed = tokio::time::timeout(Duration::from_secs(30), tickets.ping())
        .await
        .expect("an answer within 30 s");
    assert!(probed.is_err(), "readiness on a cluster that is down");
}
