//! A waiting search's `roleWaits` (docs/rules.md, "Role waits"): for each
//! role its ticket listed, the median wait (seconds) of the players matched
//! in that role seat over the last [`WINDOW_MINUTES`] minutes, read from
//! the mode's stats history. A role without matches in the window is left
//! out; a mode without `composition` has no `roleWaits`.
//!
//! The medians of a mode are cached for [`TTL`], so the status polls of a
//! mode's searches read the stats history at most once per [`TTL`] per
//! instance.

use super::Play;
use chrono::{Duration as TimeDelta, Utc};
use matchplane_matchmaker::rules::AttributeValue;
use matchplane_store::repos::stats_history::{self, Figures};
use matchplane_store::repos::StoreError;
use matchplane_store::tickets::Ticket;
use moka::future::Cache;
use sea_orm::DatabaseConnection;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Minutes of the stats history the medians are taken over.
pub const WINDOW_MINUTES: i64 = 15;

/// How long a mode's medians answer before they are read again.
pub const TTL: Duration = Duration::from_secs(10);

/// Most modes cached.
const CAPACITY: u64 = 10_000;

/// Median wait (seconds, two decimals) by role seat.
pub type RoleMedians = BTreeMap<String, f64>;

/// How long a mode whose medians could not be read answers none without
/// asking again: a database out of reach is asked once per mode in that
/// time, not once per waiting socket and second, and logged once.
pub const FAILED_TTL: Duration = Duration::from_secs(5);

/// Each mode's [`RoleMedians`], by `(project, mode)`, for [`TTL`].
#[derive(Debug, Clone)]
pub struct RoleWaitCache {
    modes: Cache<(String, String), Arc<RoleMedians>>,
    /// Modes whose last read failed, for [`FAILED_TTL`].
    failed: Cache<(String, String), ()>,
}

impl Default for RoleWaitCache {
    fn default() -> Self {
        Self {
            modes: Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(TTL)
                .build(),
            failed: Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(FAILED_TTL)
                .build(),
        }
    }
}

impl RoleWaitCache {
    /// The medians of `project_id`'s mode `mode`, from the cache or the
    /// stats history's last [`WINDOW_MINUTES`] minutes; `None` when the
    /// read failed (logged once) or failed within [`FAILED_TTL`].
    pub async fn medians(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
        mode: &str,
    ) -> Option<Arc<RoleMedians>> {
        self.medians_from(project_id, mode, read(db, project_id, mode))
            .await
    }

    /// [`RoleWaitCache::medians`], read by `load` on a miss.
    async fn medians_from(
        &self,
        project_id: &str,
        mode: &str,
        load: impl std::future::Future<Output = Result<Arc<RoleMedians>, StoreError>>,
    ) -> Option<Arc<RoleMedians>> {
        let key = (project_id.to_owned(), mode.to_owned());
        if self.failed.contains_key(&key) {
            return None;
        }
        match self.modes.try_get_with(key.clone(), load).await {
            Ok(medians) => Some(medians),
            Err(error) => {
                // Every request that shared the failed read gets its error:
                // the one that marks the mode logs it.
                if self.failed.entry(key).or_insert(()).await.is_fresh() {
                    tracing::warn!(%error, project_id, game_mode = mode, "reading roleWaits failed");
                }
                None
            }
        }
    }
}

/// The medians of the window's stored minutes.
async fn read(
    db: &DatabaseConnection,
    project_id: &str,
    mode: &str,
) -> Result<Arc<RoleMedians>, StoreError> {
    let now = Utc::now();
    let from = stats_history::minute_of(now - TimeDelta::minutes(WINDOW_MINUTES));
    let rows =
        stats_history::minutes(db, project_id, mode, from, now + TimeDelta::minutes(1)).await?;
    let mut window = Figures::default();
    for row in &rows {
        window.merge(&Figures::of_row(row));
    }
    Ok(Arc::new(
        window
            .roles
            .roles()
            .iter()
            .filter_map(|(role, figure)| {
                let p50 = figure.wait_quantile(0.5)?;
                Some((role.clone(), (p50 * 100.0).round() / 100.0))
            })
            .collect(),
    ))
}

/// `ticket`'s `roleWaits`: the medians of the roles it listed; `None` in
/// a mode without `composition` (or one gone). A failed read is logged and
/// answers `None` ([`RoleWaitCache::medians`]): the figure never fails a
/// status.
pub async fn of_ticket(
    play: &Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
) -> Option<RoleMedians> {
    let config = match play
        .cache
        .mode(db, &ticket.project_id, &ticket.game_mode)
        .await
    {
        Ok(config) => config?,
        Err(error) => {
            tracing::warn!(status = %error.status(), ticket_id = %ticket.ticket_id, "reading the mode for roleWaits failed");
            return None;
        }
    };
    let composition = config.composition.as_ref()?;
    let own = ticket.attributes.declared.get(&composition.attribute);
    let listed = match config
        .attributes
        .as_ref()
        .and_then(|d| d.get(&composition.attribute))
    {
        Some(declaration) => matchplane_matchmaker::rules::value::effective(declaration, own),
        None => own.cloned(),
    };
    let Some(AttributeValue::Set(listed)) = listed else {
        return Some(RoleMedians::new());
    };
    let medians = play
        .role_waits
        .medians(db, &ticket.project_id, &ticket.game_mode)
        .await?;
    Some(
        listed
            .iter()
            .filter_map(|role| Some((role.clone(), *medians.get(role)?)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn a_failed_read_is_not_tried_again_at_once() {
        let cache = RoleWaitCache::default();
        let reads = AtomicUsize::new(0);
        let failing = || async {
            reads.fetch_add(1, Ordering::SeqCst);
            Err(StoreError::Corrupt("the database is out of reach".into()))
        };
        for _ in 0..5 {
            assert_eq!(cache.medians_from("prj", "tanks", failing()).await, None);
        }
        assert_eq!(reads.load(Ordering::SeqCst), 1, "one read while it fails");
        // Another mode is read on its own.
        assert_eq!(cache.medians_from("prj", "duel", failing()).await, None);
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        let read = || async { Ok(Arc::new(RoleMedians::from([("tank".into(), 4.5)]))) };
        assert_eq!(cache.medians_from("prj", "tanks", read()).await, None);
        let fresh = RoleWaitCache::default();
        let got = fresh.medians_from("prj", "tanks", read()).await;
        assert_eq!(
            got.as_deref().and_then(|m| m.get("tank")).copied(),
            Some(4.5)
        );
    }
}
