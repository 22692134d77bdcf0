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

impl RedisPoolStore {
    /// What this Redis keeps through a restart: `CONFIG GET` when allowed,
    /// else `INFO persistence` (managed services often disable `CONFIG`);
    /// replicas from `INFO replication`.
    ///
    /// # Errors
    /// Redis unreachable, or neither command answered.
    pub async fn persistence(&self) -> Result<Persistence, PoolError> {
        let mut conn = self.conn();
        let replication: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut conn)
            .await?;
        let replicas = info_field(&replication, "connected_slaves")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let config: Result<Vec<String>, _> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("appendonly")
            .arg("appendfsync")
            .arg("save")
            .query_async(&mut conn)
            .await;
        if let Ok(pairs) = config {
            let get = |name: &str| {
                pairs
                    .chunks_exact(2)
                    .find(|p| p[0] == name)
                    .map(|p| p[1].clone())
            };
            return Ok(Persistence {
                aof: get("appendonly").as_deref() == Some("yes"),
                fsync: get("appendfsync"),
                rdb: get("save").is_some_and(|s| !s.trim().is_empty()),
                replicas,
            });
        }
        let info: String = redis::cmd("INFO")
            .arg("persistence")
            .query_async(&mut conn)
            .await?;
        Ok(Persistence {
            aof: info_field(&info, "aof_enabled") == Some("1"),
            fsync: None,
            // Without CONFIG the snapshot schedule is unknown: counted as
            // none (a warning too many rather than one too few).
            rdb: false,
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
    fn info_fields_are_read_by_name() {
        let info = "# Persistence\r\naof_enabled:1\r\nrdb_last_save_time:17\r\n";
        assert_eq!(info_field(info, "aof_enabled"), Some("1"));
        assert_eq!(info_field(info, "rdb_last_save_time"), Some("17"));
        assert_eq!(info_field(info, "aof"), None);
    }
}
