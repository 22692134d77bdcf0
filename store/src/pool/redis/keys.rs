//! Every Redis key and channel of the pool store, built in one place.
//!
//! All keys of one project share the hash tag `{<projectId>}` (see the design
//! notes in [`super`] for why the tag is the project and not the mode).

use crate::pool::ModeKey;

/// The keys of one game mode. `P` is the configured prefix (`mp` by default),
/// `M` the mode's name.
pub(crate) struct ModeKeys {
    /// `P:{<projectId>}:M:pool` — HASH ticketId → the search as compact JSON
    /// (`Search`, camelCase, `pingMs` left out). The live pool: a search is
    /// live exactly while it has a field here. A snapshot is one HVALS.
    pub pool: String,
    /// `P:{<projectId>}:M:players` — HASH playerId → ticketId of that player's
    /// live search: one live search per player per mode.
    pub players: String,
    /// `P:{<projectId>}:M:deadlines` — ZSET ticketId scored by its deadline
    /// (Unix seconds): the expiry sweep reads the due ones. May also hold
    /// entries of searches claimed since, until the sweep reaches them.
    pub deadlines: String,
    /// `P:{<projectId>}:M:pings` — HASH ticketId → the last five round trips
    /// (milliseconds, comma-separated, oldest first). Kept apart from `pool`
    /// so a ping (once a second per WebSocket search) rewrites a few bytes
    /// and never re-encodes the search in Lua.
    pub pings: String,
    /// `P:{<projectId>}:M:reasons` — HASH ticketId → the last cycle's
    /// `waitingReason` (JSON text), for status reads.
    pub reasons: String,
    /// `P:{<projectId>}:M:lease` — STRING `<token>|<owner>` with a PX expiry:
    /// the worker that may run this mode's cycle and commit its claims.
    pub lease: String,
    /// `P:{<projectId>}:M:fence` — STRING counter, INCR'd at each lease
    /// acquisition: fencing tokens only grow. Never expires.
    pub fence: String,
    /// `P:{<projectId>}:M:outbox` — STREAM of match records (`matchId`,
    /// `record`), appended by the claim script, read through the consumer
    /// group [`OUTBOX_GROUP`], deleted once acknowledged.
    pub outbox: String,
    /// `P:{<projectId>}:M:proposals` — HASH matchId → an open proposal
    /// (JSON: `acceptBy`, `cooldownSeconds`, `members` as `[ticketId,
    /// playerId, partyId]` triples, `record`): written by the propose
    /// script, deleted by the finish script.
    pub proposals: String,
    /// `P:{<projectId>}:M:proposal-deadlines` — ZSET matchId scored by its
    /// `acceptBy` (Unix seconds): the worker's deadline sweep.
    pub proposal_deadlines: String,
    /// `P:{<projectId>}:M:proposed` — HASH ticketId → matchId of the open
    /// proposal holding its (live) search: such a search is left out of
    /// snapshots and of the expiry sweep.
    pub proposed: String,
    /// `P:{<projectId>}:M:answers` — HASH ticketId → `<matchId>|<answer>`
    /// (`pending`, `accept`, `decline`) of the ticket's last proposal, kept
    /// after it closed so a repeated answer is told the outcome. Expires a
    /// day after its last write.
    pub answers: String,
    /// `P:{<projectId>}:M:cooldowns` — HASH playerId → end of the player's
    /// decline cooldown (Unix seconds; compared with `now` on read).
    /// Expires an hour after its last write (the longest cooldown).
    pub cooldowns: String,
    /// `P:{<projectId>}:M:backfills` — HASH backfillId → the open
    /// backfill's roster view (`OpenBackfill` JSON, camelCase) as it was
    /// opened or last replaced; its current seats, revision, expiry and
    /// status are in [`Self::backfill_seats`].
    pub backfills: String,
    /// `P:{<projectId>}:M:backfill_seats` — HASH backfillId →
    /// `<status>|<revision>|<expiresAt>|<seats,comma-separated>`: the part
    /// of a backfill the fill script checks and changes (a short string,
    /// so Lua never re-encodes JSON numbers).
    pub backfill_seats: String,
    /// `P:{<projectId>}:live` — STRING counter of the project's live searches
    /// over all its modes (the `maxConcurrentSearches` quota). Changed only by
    /// the scripts that add and remove pool entries.
    pub live: String,
    /// `P:{<projectId>}:modes` — SET of the project's mode names whose pool
    /// is not empty: added by the add script, removed by the script that
    /// empties the pool. Lists where a project's searches are (ending all of
    /// a player's searches; failing the searches of a deleted mode).
    pub modes: String,
    /// Prefix of `P:{<projectId>}:M:ended:<bucket>` — HASH ticketId → how
    /// the ticket's last search ended (`Ended` JSON). Time is cut into
    /// buckets one retention long (`bucket` = Unix seconds / retention);
    /// records go to the current bucket, which expires three retentions
    /// after its last write; reads look at the previous, current and next
    /// bucket (the next one for writers whose clock runs a little ahead). A
    /// record is so kept at least one retention and at most about two, and a
    /// claim writes one hash field per search rather than one key with its
    /// own expiry (about a tenth of the cost in Redis). Read for status and
    /// for `TICKET_ALREADY_MATCHED`.
    ended_prefix: String,
}

/// The outbox stream's consumer group.
pub(crate) const OUTBOX_GROUP: &str = "outbox";

impl ModeKeys {
    /// The keys of `mode` under `prefix`.
    pub fn new(prefix: &str, mode: &ModeKey) -> Self {
        let project = project_base(prefix, &mode.project_id);
        let base = format!("{project}:{}", mode.mode);
        Self {
            pool: format!("{base}:pool"),
            players: format!("{base}:players"),
            deadlines: format!("{base}:deadlines"),
            pings: format!("{base}:pings"),
            reasons: format!("{base}:reasons"),
            lease: format!("{base}:lease"),
            fence: format!("{base}:fence"),
            outbox: format!("{base}:outbox"),
            proposals: format!("{base}:proposals"),
            proposal_deadlines: format!("{base}:proposal-deadlines"),
            proposed: format!("{base}:proposed"),
            answers: format!("{base}:answers"),
            cooldowns: format!("{base}:cooldowns"),
            backfills: format!("{base}:backfills"),
            backfill_seats: format!("{base}:backfill_seats"),
            live: live_key(prefix, &mode.project_id),
            modes: modes_key(prefix, &mode.project_id),
            ended_prefix: format!("{base}:ended:"),
        }
    }

    /// The keys `add_live` (`scripts/common.lua`) takes, in its order: pool,
    /// players, deadlines, the `ended` buckets as [`Self::ended`] gives
    /// them, the project's live counter and its set of modes. Shared by the
    /// add and the start scripts, whose KEYS must both follow it.
    pub fn add_live<'a>(&'a self, ended: &'a [String; 3]) -> [&'a str; 8] {
        let [current, next, previous] = ended;
        [
            &self.pool,
            &self.players,
            &self.deadlines,
            current,
            next,
            previous,
            &self.live,
            &self.modes,
        ]
    }

    /// The ended-record buckets around `bucket`: `[current, next,
    /// previous]`, the order every script takes them in.
    pub fn ended(&self, bucket: u64) -> [String; 3] {
        let p = &self.ended_prefix;
        [
            format!("{p}{bucket}"),
            format!("{p}{}", bucket + 1),
            format!("{p}{}", bucket.saturating_sub(1)),
        ]
    }
}

/// `parts` joined, in one allocation of the exact size: the ticket routes
/// build two keys per request, and `format!` of a `format!` showed in their
/// profile.
fn concat(parts: &[&str]) -> String {
    let mut key = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for part in parts {
        key.push_str(part);
    }
    key
}

/// `P:{<projectId>}`: the hash-tagged start of every key of a project.
fn project_base(prefix: &str, project_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}"])
}

/// `P:{<projectId>}:live`: see [`ModeKeys::live`].
pub(crate) fn live_key(prefix: &str, project_id: &str) -> String {
    format!("{}:live", project_base(prefix, project_id))
}

/// `P:{<projectId>}:modes`: see [`ModeKeys::modes`].
pub(crate) fn modes_key(prefix: &str, project_id: &str) -> String {
    format!("{}:modes", project_base(prefix, project_id))
}

/// `P:projects` — ZSET projectId → when a search was last added in the
/// project (Unix seconds, the adding process's clock): every project that
/// may have live searches, so the worker finds the pools of a project the
/// database no longer has (deleted) and fails them. The one key under no
/// project's hash tag, as it lists them all: the add and start scripts
/// never touch it; a process pipelines a ZADD (GT) of it before the script,
/// in the same round trip, unless it wrote the project within the last
/// minute, so a search is never added in a project the registry lacks. The
/// worker's listing forgets a project once its `modes` set is empty and its
/// last write is ten minutes old (see `projects.rs`), with a
/// check-and-remove script on this key alone.
pub(crate) fn projects_key(prefix: &str) -> String {
    concat(&[prefix, ":projects"])
}

/// `P:workers` — ZSET workerId → when its heartbeat lapses (Unix ms, Redis
/// clock): the live workers, which share the modes between them
/// (`scripts/workers.lua`). Under no project's hash tag (it spans them);
/// only that script touches it, on this key alone.
pub(crate) fn workers_key(prefix: &str) -> String {
    concat(&[prefix, ":workers"])
}

/// `P:{<projectId>}:ticket:<ticketId>` — STRING, a [`crate::tickets::Ticket`]
/// as JSON (written by the ticket store, read by the start script). Under
/// the project's hash tag, so one script reads it and adds the search.
pub(crate) fn ticket_key(prefix: &str, project_id: &str, ticket_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}:ticket:", ticket_id])
}

/// `P:{<projectId>}:pending` — ZSET ticketId → expiry (Unix seconds) of
/// the project's tickets generated and not yet searching (the tier's
/// `maxPendingTickets`). Under the project's hash tag, so the start script
/// removes a ticket from it in the same slot.
pub(crate) fn pending_key(prefix: &str, project_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}:pending"])
}

/// `P:{<projectId>}:M:players`: see [`ModeKeys::players`] (without building
/// every other key of the mode).
pub(crate) fn players_key(prefix: &str, project_id: &str, mode: &str) -> String {
    concat(&[prefix, ":{", project_id, "}:", mode, ":players"])
}

/// `P:status:<ticketId>` — pub/sub channel of a ticket's status messages.
/// Channels have no slot; the API instance holding the ticket's socket
/// subscribes, the worker and other API instances publish.
pub(crate) fn status_channel(prefix: &str, ticket_id: &str) -> String {
    format!("{prefix}:status:{ticket_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_key_shares_the_project_hash_tag() {
        let keys = ModeKeys::new("mp", &ModeKey::new("prj_1", "ranked-5v5"));
        assert_eq!(keys.pool, "mp:{prj_1}:ranked-5v5:pool");
        let [current, next, previous] = keys.ended(7);
        assert_eq!(current, "mp:{prj_1}:ranked-5v5:ended:7");
        assert_eq!(next, "mp:{prj_1}:ranked-5v5:ended:8");
        assert_eq!(previous, "mp:{prj_1}:ranked-5v5:ended:6");
        for key in [
            &keys.pool,
            &keys.players,
            &keys.deadlines,
            &keys.pings,
            &keys.reasons,
            &keys.lease,
            &keys.fence,
            &keys.outbox,
            &keys.proposals,
            &keys.proposal_deadlines,
            &keys.proposed,
            &keys.answers,
            &keys.cooldowns,
            &keys.live,
            &keys.modes,
        ] {
            assert!(key.starts_with("mp:{prj_1}:"), "{key}");
        }
        let mode = ModeKey::new("prj_1", "ranked-5v5");
        assert_eq!(
            players_key("mp", &mode.project_id, &mode.mode),
            keys.players
        );
        assert_eq!(
            ticket_key("mp", "prj_1", "tkt_9"),
            "mp:{prj_1}:ticket:tkt_9"
        );
    }
}
