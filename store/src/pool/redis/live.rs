//! The project's side of its live searches, kept in the project's own slot
//! while each mode's pool sits in the mode's slot (see the design notes in
//! [`super`]): the `maxConcurrentSearches` counter, the modes with
//! searches, and the `project` `playerSearchScope`'s player reservations.
//!
//! No script can touch two slots, so adding a search takes three steps:
//!
//! 1. **admit** (project slot): refuse over the quota. Under the `mode`
//!    scope (the default) that is a read of the counter, in the project's
//!    next batch (see `lane`), and nothing when the project has no quota.
//!    Under the `project` scope it is `scripts/live_begin.lua`: the quota,
//!    the mode registered among the project's modes with searches, and the
//!    player reserved for this search;
//! 2. **add** (`scripts/add_search.lua`, mode slot): the mode's own rules,
//!    then the project's refusal from step 1; a search added is measured
//!    (the pool's size with a version) in the same step;
//! 3. **apply** (`scripts/live_apply.lua`, project slot, batched per
//!    project in `lane`, not waited for by the add): the measurement goes
//!    into the counter unless a newer one did, and lists the mode among
//!    the project's modes with searches; the ticket leaves the pending
//!    ones and joins the started ones (`keys::started_key`); a refused
//!    add's unused reservation is given back (that one waited for).
//!
//! Every other change of a pool (an end, an expiry, a claim, a fill, a
//! closed proposal) is measured and applied right after (`sync_live`). The
//! counter is therefore exact whenever no add is between its steps 1 and
//! 3: a start may overshoot the quota by at most the starts in flight at
//! the instant its read runs. A process that dies between two steps (or
//! with a batch queued) leaves the counter, and under the `mode` scope the
//! mode's listing, behind its pool; the worker that holds the mode
//! measures and applies again whenever its lease probe finds the pool's
//! size other than it last applied (`sync_if_changed`), and a mode is
//! counted again before it is deleted (`Searches::recount`), so that the
//! sweep lists every search of a deleted mode too.

use redis::Script;

use super::keys::{pending_key, player_key, started_key, ProjectKeys};
use super::lane::Queued;
use super::RedisPoolStore;
use crate::pool::types::wall_clock;
use crate::pool::{ModeKey, PlayerSearchScope, PoolError};

/// How long a reservation lives (seconds): the longest ticket, and a day
/// more for a released match's tickets searching again.
const RESERVATION_SECONDS: u64 =
    matchplane_matchmaker::validation::MAX_TICKET_TTL_SECONDS as u64 + 86_400;

/// How long a reservation whose search is neither live nor ended is taken
/// for a start still in flight (seconds); older, it is stale.
const START_WINDOW_SECONDS: f64 = 30.0;

/// Times a start re-reads a reservation that changed under it before it
/// gives up.
const ADMIT_TRIES: usize = 4;

/// The project scripts (the measure script shares `common.lua`).
pub(super) struct LiveScripts {
    begin: Script,
    pub(super) apply: Script,
    measure: Script,
}

impl LiveScripts {
    pub(super) fn new() -> Self {
        Self {
            begin: Script::new(include_str!("scripts/live_begin.lua")),
            apply: Script::new(include_str!("scripts/live_apply.lua")),
            measure: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/measure.lua")
            )),
        }
    }
}

/// The last pool size this process applied per mode (see
/// [`RedisPoolStore::sync_if_changed`]). Bounded: an API process touches
/// every mode its clients search in, and a mode forgotten here costs one
/// measurement at its next probe, nothing more.
pub(super) struct Applied(moka::sync::Cache<ModeKey, u64>);

impl Default for Applied {
    fn default() -> Self {
        Self(
            moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_idle(std::time::Duration::from_secs(3_600))
                .build(),
        )
    }
}

impl Applied {
    fn get(&self, mode: &ModeKey) -> Option<u64> {
        self.0.get(mode)
    }

    pub(super) fn set(&self, mode: &ModeKey, size: u64) {
        self.0.insert(mode.clone(), size);
    }
}

/// What the project said of an add (step 1), for the add script.
#[derive(Debug)]
pub(super) enum Refusal {
    /// Nothing against it.
    None,
    /// Over `maxConcurrentSearches`.
    Quota,
    /// Another search holds the player (the `project` scope): its ticket
    /// and mode.
    Player { ticket_id: String, mode: String },
}

impl Refusal {
    /// The add script's ARGV 6 to 8.
    pub(super) fn args(&self) -> [&str; 3] {
        match self {
            Self::None => ["", "", ""],
            Self::Quota => ["quota", "", ""],
            Self::Player { ticket_id, mode } => ["player", ticket_id, mode],
        }
    }
}

/// The outcome of step 1.
pub(super) struct Admission {
    /// What the add script is to refuse for the project.
    pub refusal: Refusal,
    /// The reservation key written for this search, if any (the `project`
    /// scope): given back if the add does not happen.
    reserved: Option<String>,
    /// Whether step 1 registered the mode among the project's modes with
    /// searches (the `project` scope, the mode not listed): measured again
    /// if the add does not happen.
    registered: bool,
}

impl Admission {
    /// Whether step 1 registered the mode (see the field).
    pub(super) fn registered(&self) -> bool {
        self.registered
    }
}

/// Whose a reservation found in the way is.
enum Holder {
    /// A search live (or about to be) elsewhere holds the player.
    Holds { ticket_id: String, mode: String },
    /// Nothing holds it any more: it may be taken over.
    Stale,
}

impl RedisPoolStore {
    /// Step 1 of an add: see the module doc. `ticket_id` is the search's;
    /// `player_id` is only read under the `project` scope.
    ///
    /// # Errors
    /// A Redis failure, or a reservation that kept changing under
    /// [`ADMIT_TRIES`] reads (`Corrupt`).
    pub(super) async fn admit(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        player_id: &str,
        max_live: Option<u64>,
        scope: PlayerSearchScope,
    ) -> Result<Admission, PoolError> {
        if scope == PlayerSearchScope::Mode {
            // Nothing to reserve, nothing to register (the mode is listed by
            // its add's step 3): the quota is a read, in the project's next
            // batch; no quota, no read.
            let refusal = match max_live {
                Some(limit) => {
                    let live = self.read_live(&mode.project_id).await?;
                    if live.max(0).unsigned_abs() >= limit {
                        Refusal::Quota
                    } else {
                        Refusal::None
                    }
                }
                None => {
                    self.note_project(&mode.project_id).await?;
                    Refusal::None
                }
            };
            return Ok(Admission {
                refusal,
                reserved: None,
                registered: false,
            });
        }
        let project = ProjectKeys::new(self.prefix(), &mode.project_id);
        let reservation = Some(player_key(self.prefix(), &mode.project_id, player_id));
        let limit = max_live.map(|l| l.to_string()).unwrap_or_default();
        let mut stale = String::new();
        for _ in 0..ADMIT_TRIES {
            let now = wall_clock();
            let mut call = self.inner.live.begin.prepare_invoke();
            call.key(&project.live).key(&project.counts);
            if let Some(key) = &reservation {
                call.key(key);
            }
            call.arg(&mode.mode)
                .arg(&limit)
                .arg(ticket_id)
                .arg(now.floor() as i64)
                .arg(RESERVATION_SECONDS)
                .arg(&stale);
            let reply: Vec<String> = self.invoke_in_project(&mode.project_id, &call).await?;
            match (reply.first().map(String::as_str), reply.get(1)) {
                (Some("ok"), registered) => {
                    return Ok(Admission {
                        refusal: Refusal::None,
                        reserved: reservation,
                        registered: registered.is_some_and(|r| r == "1"),
                    })
                }
                (Some("quota"), _) => {
                    return Ok(Admission {
                        refusal: Refusal::Quota,
                        reserved: None,
                        registered: false,
                    })
                }
                (Some("held"), Some(held)) => match self.holder(mode, held, now).await? {
                    Holder::Holds { ticket_id, mode } => {
                        return Ok(Admission {
                            refusal: Refusal::Player { ticket_id, mode },
                            reserved: None,
                            registered: false,
                        })
                    }
                    Holder::Stale => stale.clone_from(held),
                },
                other => return Err(PoolError::Corrupt(format!("live_begin answered {other:?}"))),
            }
        }
        Err(PoolError::Corrupt(format!(
            "the reservation of player {player_id} kept changing"
        )))
    }

    /// Whose the reservation `held` (`<mode>|<ticketId>|<at>`) is, found by
    /// an add in `mode` at `now`: a search of the same mode is left to the
    /// add script's own per-mode check; one of another mode holds the
    /// player while it is live there, or while it is neither live nor ended
    /// since the reservation was written, and the reservation is younger
    /// than [`START_WINDOW_SECONDS`] (its start in flight: a ticket
    /// starting again after its search ended, as a released match's does,
    /// writes a new reservation over its old one).
    async fn holder(&self, mode: &ModeKey, held: &str, now: f64) -> Result<Holder, PoolError> {
        let mut parts = held.splitn(3, '|');
        let (Some(name), Some(ticket), Some(at)) = (parts.next(), parts.next(), parts.next())
        else {
            return Ok(Holder::Stale);
        };
        if name == mode.mode {
            return Ok(Holder::Stale);
        }
        let other = ModeKey::new(&mode.project_id, name);
        let keys = self.keys(&other);
        let [current, next, previous] = self.ended_keys(&keys);
        let (live, current, next, previous): (
            bool,
            Option<String>,
            Option<String>,
            Option<String>,
        ) = redis::pipe()
            .hexists(&keys.pool, ticket)
            .hget(&current, ticket)
            .hget(&next, ticket)
            .hget(&previous, ticket)
            .query_async(&mut self.conn())
            .await?;
        let at = at.parse::<f64>().ok();
        // The search named ended since the reservation was written. A
        // reservation written after the end is the same ticket starting
        // again (a released match's, or one cancelled): in flight as any.
        let ended = next.or(current).or(previous).is_some_and(|json| {
            let ended_at = super::parse_ended(&json).ok().and_then(|e| e.ended_at);
            match (at, ended_at) {
                (Some(at), Some(ended_at)) => ended_at >= at,
                _ => true,
            }
        });
        let starting = !ended && at.is_some_and(|at| now - at < START_WINDOW_SECONDS);
        Ok(if live || starting {
            Holder::Holds {
                ticket_id: ticket.to_owned(),
                mode: name.to_owned(),
            }
        } else {
            Holder::Stale
        })
    }

    /// Step 3 of an add, given the add script's measurement (`None` when it
    /// refused): see the module doc. `started`: the ticket (and its expiry)
    /// a search was started from, which leaves the project's pending
    /// tickets for its started ones.
    pub(super) async fn after_add(
        &self,
        mode: &ModeKey,
        admission: &Admission,
        ticket_id: &str,
        measured: Option<(String, String)>,
        started: Option<(&str, f64)>,
    ) -> Result<(), PoolError> {
        // An add applies in the project's next batch, not waited for (see
        // `lane`). A refused add gives its reservation back, and measures
        // the pool if step 1 registered the mode (it may have no search).
        let (measured, release) = match measured {
            Some((size, version)) => {
                self.queue_apply(
                    &mode.project_id,
                    Queued {
                        mode: mode.mode.clone(),
                        size,
                        version,
                        ticket: started.map(|(id, expires_at)| (id.to_owned(), expires_at)),
                    },
                );
                return Ok(());
            }
            None if admission.reserved.is_none() && !admission.registered => return Ok(()),
            None => (
                self.measure(mode).await?,
                admission
                    .reserved
                    .as_ref()
                    .map(|key| (key.as_str(), format!("{}|{ticket_id}|", mode.mode))),
            ),
        };
        self.apply(
            mode,
            &measured,
            release.as_ref().map(|(key, held)| (*key, held.as_str())),
        )
        .await
    }

    /// Measures the mode's pool (mode slot) and applies it (project slot):
    /// after every change of a pool other than an add. Never fails the
    /// change it follows: on a Redis failure the worker's next probe
    /// repairs the counter, so the error is only logged.
    pub(super) async fn sync_live(&self, mode: &ModeKey) {
        if let Err(err) = self.measure_and_apply(mode).await {
            tracing::warn!(project_id = %mode.project_id, game_mode = %mode.mode, error = %err,
                "the project's live count was not updated; the mode's worker will");
        }
    }

    /// Measures the mode's pool and applies it, waiting for both.
    ///
    /// # Errors
    /// A Redis failure.
    pub(super) async fn measure_and_apply(&self, mode: &ModeKey) -> Result<(), PoolError> {
        let measured = self.measure(mode).await?;
        self.apply(mode, &measured, None).await
    }

    /// Measures and applies when the pool's `size` (from the lease probe)
    /// differs from what this process applied last for the mode: repairs a
    /// counter an interrupted add or end left behind, at no cost to an idle
    /// mode.
    pub(crate) async fn sync_if_changed(&self, mode: &ModeKey, size: u64) {
        if self.inner.applied.get(mode).unwrap_or(0) != size {
            self.sync_live(mode).await;
        }
    }

    /// The pool's size and a new version (`scripts/measure.lua`).
    async fn measure(&self, mode: &ModeKey) -> Result<(String, String), PoolError> {
        let keys = self.keys(mode);
        let (size, version): (String, String) = self
            .inner
            .live
            .measure
            .key(&keys.pool)
            .key(&keys.version)
            .invoke_async(&mut self.conn())
            .await?;
        Ok((size, version))
    }

    /// `scripts/live_apply.lua` with one measurement, waited for. `release`:
    /// the reservation key and the value prefix it must still have to be
    /// deleted.
    async fn apply(
        &self,
        mode: &ModeKey,
        (size, version): &(String, String),
        release: Option<(&str, &str)>,
    ) -> Result<(), PoolError> {
        let project = ProjectKeys::new(self.prefix(), &mode.project_id);
        let mut call = self.inner.live.apply.prepare_invoke();
        call.key(&project.live)
            .key(&project.counts)
            .key(&project.versions)
            .key(pending_key(self.prefix(), &mode.project_id))
            .key(started_key(self.prefix(), &mode.project_id));
        if let Some((key, _)) = release {
            call.key(key);
        }
        call.arg(release.map_or("", |(_, prefix)| prefix))
            .arg(wall_clock())
            .arg(1)
            .arg(&mode.mode)
            .arg(size)
            .arg(version);
        let _live: i64 = call.invoke_async(&mut self.conn()).await?;
        if let Ok(size) = size.parse() {
            self.inner.applied.set(mode, size);
        }
        Ok(())
    }
}
