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

/// Each mode's [`RoleMedians`], by `(project, mode)`, for [`TTL`].
#[derive(Debug, Clone)]
pub struct RoleWaitCache {
    modes: Cache<(String, String), Arc<RoleMedians>>,
}

impl Default for RoleWaitCache {
    fn default() -> Self {
        Self {
            modes: Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(TTL)
                .build(),
        }
    }
}

impl RoleWaitCache {
    /// The medians of `project_id`'s mode `mode`, from the cache or the
    /// stats history's last [`WINDOW_MINUTES`] minutes.
    ///
    /// # Errors
    /// The database's error (nothing is cached then).
    pub async fn medians(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
        mode: &str,
    ) -> Result<Arc<RoleMedians>, Arc<StoreError>> {
        let key = (project_id.to_owned(), mode.to_owned());
        self.modes
            .try_get_with(key, read(db, project_id, mode))
            .await
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
/// answers `None`: the figure never fails a status.
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
    let medians = match play
        .role_waits
        .medians(db, &ticket.project_id, &ticket.game_mode)
        .await
    {
        Ok(medians) => medians,
        Err(error) => {
            tracing::warn!(%error, ticket_id = %ticket.ticket_id, "reading roleWaits failed");
            return None;
        }
    };
    Some(
        listed
            .iter()
            .filter_map(|role| Some((role.clone(), *medians.get(role)?)))
            .collect(),
    )
}
