//! Whether the Redis a process reaches keeps its data through a restart:
//! checked once at start-up, so `matchplane api` and `worker` can warn.
//!
//! Searches in flight, claimed matches not yet stored and the fence
//! counters live in Redis; without persistence (AOF, RDB snapshots) or a
//! replica to fail over to, a restart loses them all.

use super::RedisPoolStore;
use crate::pool::PoolError;

/// What a Redis keeps through a restart, as far as it tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persistence {
    /// The append-only file is on (`appendonly yes`).
    pub aof: bool,
    /// `appendfsync` when known (`everysec` loses about a second).
    pub fsync: Option<String>,
    /// RDB snapshots are scheduled (`save` is not empty).
    pub rdb: bool,
    /// Replicas connected to this primary.
    pub replicas: u32,
}

impl Persistence {
    /// A warning for the logs when a restart would lose data beyond a
    /// second; `None` with AOF `everysec` (or `always`) or a replica.
    pub fn warning(&self) -> Option<String> {
        let aof_ok = self.aof && self.fsync.as_deref() != Some("no");
        if aof_ok || self.replicas > 0 {
            return None;
        }
        Some(if self.rdb {
            "Redis persists only RDB snapshots: a restart loses the searches, the claimed \
             matches not yet stored and the lease counters written since the last snapshot; \
             turn on AOF (appendonly yes, appendfsync everysec) or run a replica"
                .to_owned()
        } else {
            "Redis has no persistence: a restart loses every search in flight and the claimed \
             matches not yet stored; turn on AOF (appendonly yes, appendfsync everysec) or run \
             a replica"
                .to_owned()
        })
    }
}

/// `field:value` of an `INFO` section.
fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|line| {
        line.strip_prefix(field)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    })
}

/// The text of each node's answer to `INFO <section>`: one node's, or on a
/// cluster every master's (the cluster client asks them all and answers a
/// map of node address → text).
fn info_texts(answer: redis::Value) -> Result<Vec<String>, PoolError> {
    let answers = match answer {
        redis::Value::Map(nodes) => nodes.into_iter().map(|(_, text)| text).collect(),
        one => vec![one],
    };
    answers
        .into_iter()
        .map(|text| {
            redis::from_redis_value::<String>(text)
                .map_err(|e| PoolError::Redis(redis::RedisError::from(e)))
        })
        .collect()
}

impl RedisPoolStore {
    /// What this Redis keeps through a restart. The append-only file and
    /// the replicas from `INFO persistence` and `INFO replication`, which a
    /// cluster answers for every master (the weakest counts: AOF only if
    /// every master has it, replicas as the fewest any master has);
    /// `appendfsync` and the snapshot schedule from `CONFIG GET` when
    /// allowed (managed services often disable `CONFIG`), which a cluster
    /// answers for one node.
    ///
    /// # Errors
    /// Redis unreachable, or `INFO` not answered.
    pub async fn persistence(&self) -> Result<Persistence, PoolError> {
        let mut conn = self.conn();
        let info = |section: &'static str| {
            let mut cmd = redis::cmd("INFO");
            cmd.arg(section);
            cmd
        };
        let replication = info_texts(info("replication").query_async(&mut conn).await?)?;
        let persistence = info_texts(info("persistence").query_async(&mut conn).await?)?;
        let replicas = replication
            .iter()
            .map(|text| {
                info_field(text, "connected_slaves")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0)
            })
            .min()
            .unwrap_or(0);
        let aof = !persistence.is_empty()
            && persistence
                .iter()
                .all(|text| info_field(text, "aof_enabled") == Some("1"));
        let config: Result<Vec<String>, _> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("appendfsync")
            .arg("save")
            .query_async(&mut conn)
            .await;
        let Ok(pairs) = config else {
            return Ok(Persistence {
                aof,
                fsync: None,
                // Without CONFIG the snapshot schedule is unknown: counted
                // as none (a warning too many rather than one too few).
                rdb: false,
                replicas,
            });
        };
        let get = |name: &str| {
            pairs
                .chunks_exact(2)
                .find(|p| p[0] == name)
                .map(|p| p[1].clone())
        };
        Ok(Persistence {
            aof,
            fsync: get("appendfsync"),
            rdb: get("save").is_some_and(|s| !s.trim().is_empty()),
            replicas,
        })
    }
}

impl RedisPoolStore {
    /// Logs a warning (at start-up) when this Redis keeps nothing through a
    /// restart ([`Persistence::warning`]), or when it cannot tell.
    pub async fn warn_without_persistence(&self) {
        match self.persistence().await {
            Ok(persistence) => {
                if let Some(warning) = persistence.warning() {
                    tracing::warn!(?persistence, "{warning}");
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not tell whether Redis persists its data");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aof_everysec_or_a_replica_needs_no_warning() {
        let none = Persistence {
            aof: false,
            fsync: Some("everysec".into()),
            rdb: false,
            replicas: 0,
        };
        assert!(none.warning().unwrap().contains("no persistence"));
        let aof = Persistence {
            aof: true,
            ..none.clone()
        };
        assert_eq!(aof.warning(), None);
        let replica = Persistence {
            replicas: 1,
            ..none.clone()
        };
        assert_eq!(replica.warning(), None);
        let rdb = Persistence { rdb: true, ..none };
        assert!(rdb.warning().unwrap().contains("RDB"));
    }

    #[test]
    fn a_clusters_info_is_read_for_every_master() {
        let text = |t: &str| redis::Value::BulkString(t.as_bytes().to_vec());
        let one = info_texts(text("aof_enabled:1\r\n")).unwrap();
        assert_eq!(one, vec!["aof_enabled:1\r\n".to_owned()]);
        let cluster = redis::Value::Map(vec![
            (text("127.0.0.1:7101"), text("aof_enabled:1\r\n")),
            (text("127.0.0.1:7102"), text("aof_enabled:0\r\n")),
        ]);
        let all = info_texts(cluster).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(info_field(&all[1], "aof_enabled"), Some("0"));
    }

    #[test]
    fn info_fields_are_read_by_name() {
        let info = "# Persistence\r\naof_enabled:1\r\nrdb_last_save_time:17\r\n";
        assert_eq!(info_field(info, "aof_enabled"), Some("1"));
        assert_eq!(info_field(info, "rdb_last_save_time"), Some("17"));
        assert_eq!(info_field(info, "aof"), None);
    }
}
