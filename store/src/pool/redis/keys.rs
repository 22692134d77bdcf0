//! Every Redis key and channel of the pool store, built in one place.
//!
//! Every key of one game mode shares the hash tag `{<projectId>/<mode>}`, so
//! each script runs in one Redis Cluster slot and one project's modes spread
//! over the cluster's masters. The few keys that span a project's modes
//! (its live-search counter, its modes with searches, its pending tickets,
//! the `project` scope's player reservations) share the tag
//! `{<projectId>}`; ticket records carry no tag at all, so they spread over
//! every slot (see the design notes in [`super`]).

use crate::pool::ModeKey;

/// The keys of one game mode. `P` is the configured prefix (`mp` by default),
/// `M` the mode's name.
pub(crate) struct ModeKeys {
    /// `P:{<projectId>/M}:pool` — HASH ticketId → the search as compact JSON
    /// (`Search`, camelCase, `pingMs` left out). The live pool: a search is
    /// live exactly while it has a field here. A snapshot is one HVALS.
    pub pool: String,
    /// `P:{<projectId>/M}:players` — HASH playerId → ticketId of that player's
    /// live search: one live search per player per mode.
    pub players: String,
    /// `P:{<projectId>/M}:deadlines` — ZSET ticketId scored by its deadline
    /// (Unix seconds): the expiry sweep reads the due ones. May also hold
    /// entries of searches claimed since, until the sweep reaches them.
    pub deadlines: String,
    /// `P:{<projectId>/M}:pings` — HASH ticketId → the last five round trips
    /// (milliseconds, comma-separated, oldest first). Kept apart from `pool`
    /// so a ping (once a second per WebSocket search) rewrites a few bytes
    /// and never re-encodes the search in Lua.
    pub pings: String,
    /// `P:{<projectId>/M}:reasons` — HASH ticketId → the last cycle's
    /// `waitingReason` (JSON text), for status reads.
    pub reasons: String,
    /// `P:{<projectId>/M}:lease` — STRING `<token>|<owner>` with a PX expiry:
    /// the worker that may run this mode's cycle and commit its claims.
    pub lease: String,
    /// `P:{<projectId>/M}:fence` — STRING counter, INCR'd at each lease
    /// acquisition: fencing tokens only grow. Never expires.
    pub fence: String,
    /// `P:{<projectId>/M}:outbox` — STREAM of match records (`matchId`,
    /// `record`), appended by the claim script, read through the consumer
    /// group [`OUTBOX_GROUP`], deleted once acknowledged.
    pub outbox: String,
    /// `P:{<projectId>/M}:proposals` — HASH matchId → an open proposal
    /// (JSON: `acceptBy`, `cooldownSeconds`, `members` as `[ticketId,
    /// playerId, partyId]` triples, `record`): written by the propose
    /// script, deleted by the finish script.
    pub proposals: String,
    /// `P:{<projectId>/M}:proposal-deadlines` — ZSET matchId scored by its
    /// `acceptBy` (Unix seconds): the worker's deadline sweep.
    pub proposal_deadlines: String,
    /// `P:{<projectId>/M}:proposed` — HASH ticketId → matchId of the open
    /// proposal holding its (live) search: such a search is left out of
    /// snapshots and of the expiry sweep.
    pub proposed: String,
    /// `P:{<projectId>/M}:answers` — HASH ticketId → `<matchId>|<answer>`
    /// (`pending`, `accept`, `decline`) of the ticket's last proposal, kept
    /// after it closed so a repeated answer is told the outcome. Expires a
    /// day after its last write.
    pub answers: String,
    /// `P:{<projectId>/M}:cooldowns` — HASH playerId → end of the player's
    /// decline cooldown (Unix seconds; compared with `now` on read).
    /// Expires an hour after its last write (the longest cooldown).
    pub cooldowns: String,
    /// `P:{<projectId>/M}:backfills` — HASH backfillId → the open
    /// backfill's roster view (`OpenBackfill` JSON, camelCase) as it was
    /// opened or last replaced; its current seats, revision, expiry and
    /// status are in [`Self::backfill_seats`].
    pub backfills: String,
    /// `P:{<projectId>/M}:backfill_seats` — HASH backfillId →
    /// `<status>|<revision>|<expiresAt>|<seats,comma-separated>`: the part
    /// of a backfill the fill script checks and changes (a short string,
    /// so Lua never re-encodes JSON numbers).
    pub backfill_seats: String,
    /// `P:{<projectId>/M}:live-version` — STRING counter, INCR'd each time
    /// the pool's size is measured for the project's counter (see
    /// [`ProjectKeys`]): a later measurement has a higher version, so the
    /// project keeps only the newest of concurrent measurements.
    pub version: String,
    /// `P:{<projectId>/M}:held` — STRING `1` or `0`: the mode's hold as a
    /// worker last read it from the database, for a worker that cannot
    /// read it (docs/game-modes.md, "Holding matching").
    pub held: String,
    /// `P:{<projectId>/M}:revoked` — ZSET ticketId scored by the ticket's
    /// expiry (Unix seconds): tickets revoked before any search started
    /// with them, which the add script refuses (a start that read the
    /// ticket's record just before its revocation adds nothing). Trimmed
    /// on each revocation; the key lives as long as its last member.
    pub revoked: String,
    /// `P:{<projectId>/M}:leaving` — HASH playerId → `<ticketId>|<matchId>`:
    /// a player whose search ended (a cancel, a closed socket) while in
    /// open proposal `matchId`, until that proposal closes (and cools the
    /// player down if it was their leaving). The add script refuses the
    /// player meanwhile; an entry whose proposal is gone holds nobody.
    pub leaving: String,
    /// Prefix of `P:{<projectId>/M}:ended:<bucket>` — HASH ticketId → how
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
        let base = mode_base(prefix, &mode.project_id, &mode.mode);
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
            version: format!("{base}:live-version"),
            held: format!("{base}:held"),
            revoked: format!("{base}:revoked"),
            leaving: format!("{base}:leaving"),
            ended_prefix: format!("{base}:ended:"),
        }
    }

    /// The keys `add_live` (`scripts/common.lua`) takes, in its order: pool,
    /// players, deadlines, the `ended` buckets as [`Self::ended`] gives
    /// them, and the live version.
    pub fn add_live<'a>(&'a self, ended: &'a [String; 3]) -> [&'a str; 7] {
        let [current, next, previous] = ended;
        [
            &self.pool,
            &self.players,
            &self.deadlines,
            current,
            next,
            previous,
            &self.version,
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

/// The keys of one project that span its modes, all under the hash tag
/// `{<projectId>}` (one Cluster slot, apart from every mode's slot). No
/// script touches a mode's keys and these together: a change of a pool is
/// measured in the mode's slot, then applied here (`scripts/live_apply.lua`).
pub(crate) struct ProjectKeys {
    /// `P:{<projectId>}:live` — STRING, the project's live searches over all
    /// its modes as last measured (the `maxConcurrentSearches` quota): the
    /// sum of [`Self::counts`].
    pub live: String,
    /// `P:{<projectId>}:counts` — HASH mode → its pool's size as last
    /// measured, for the modes that may have searches: an add's measurement
    /// lists its mode (under the `project` scope the start registers it,
    /// `0`, before it adds), a measurement of an empty pool removes the
    /// field. Lists where a project's searches are (ending all of a player's
    /// searches; failing the searches of a deleted mode).
    pub counts: String,
    /// `P:{<projectId>}:versions` — HASH mode → the version of the
    /// measurement in [`Self::counts`]; an older one arriving late is
    /// ignored. Kept when the count field goes (one short field per mode).
    pub versions: String,
}

impl ProjectKeys {
    /// The keys of `project_id` under `prefix`.
    pub fn new(prefix: &str, project_id: &str) -> Self {
        let base = project_base(prefix, project_id);
        Self {
            live: concat(&[&base, ":live"]),
            counts: concat(&[&base, ":counts"]),
            versions: concat(&[&base, ":versions"]),
        }
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

/// `P:{<projectId>}`: the hash-tagged start of the keys that span a
/// project's modes.
fn project_base(prefix: &str, project_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}"])
}

/// `P:{<projectId>/<mode>}`: the hash-tagged start of every key of a mode.
fn mode_base(prefix: &str, project_id: &str, mode: &str) -> String {
    concat(&[prefix, ":{", project_id, "/", mode, "}"])
}

/// `P:{<projectId>}:player:<playerId>` — STRING `<mode>|<ticketId>|<at>`
/// (`at` in Unix seconds): under the `project` `playerSearchScope`, the
/// mode and ticket of the player's live (or starting) search, written
/// before the search is added (`scripts/live_begin.lua`). It is a
/// reservation, not the truth: a search that ended leaves it behind, and
/// the next start elsewhere checks it against the named mode's pool (live
/// there, ended there, or neither and older than a start can take) before
/// taking it over. Expires with the longest ticket.
pub(crate) fn player_key(prefix: &str, project_id: &str, player_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}:player:", player_id])
}

/// `P:projects` — ZSET projectId → when a search was last added in the
/// project (Unix seconds, the adding process's clock): every project that
/// may have live searches, so the worker finds the pools of a project the
/// database no longer has (deleted) and fails them. Under no hash tag, as
/// it lists them all: the add script never touches it; a process pipelines
/// a ZADD (GT) of it before the add's first step, in the same round trip,
/// unless it wrote the project within the last minute, so a search is never
/// added in a project the registry lacks. The worker's listing forgets a
/// project once its [`ProjectKeys::counts`] is empty and its last write is
/// ten minutes old (see `projects.rs`), with a check-and-remove script on
/// this key alone.
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

/// `P:ready` — never written: the readiness probe of the ticket store
/// reads it (`EXISTS`), a data command under the prefix, which a Redis
/// Cluster whose state is `fail` refuses (`CLUSTERDOWN`) as it refuses
/// tickets, where `PING` is still answered by any live node
/// (docs/operations.md, 'Readiness'). Under no hash tag, like the tickets.
pub(crate) fn readiness_key(prefix: &str) -> String {
    concat(&[prefix, ":ready"])
}

/// `P:ticket:<projectId>:<ticketId>` — STRING, a [`crate::tickets::Ticket`]
/// as JSON (written by the ticket store, read when a search starts and for
/// status). Under no hash tag: a project's tickets spread over every slot of
/// a cluster, and a ticket is found by its id alone (a status read does not
/// know its mode).
pub(crate) fn ticket_key(prefix: &str, project_id: &str, ticket_id: &str) -> String {
    concat(&[prefix, ":ticket:", project_id, ":", ticket_id])
}

/// `P:party:<projectId>:<partyId>` — STRING, the JSON list of the party's
/// members as its latest ticket named them, which an earlier version wrote
/// with each ticket; now only read, beside [`party_members_key`], until the
/// last such key expires with its ticket's record.
pub(crate) fn party_key(prefix: &str, project_id: &str, party_id: &str) -> String {
    concat(&[prefix, ":party:", project_id, ":", party_id])
}

/// `P:party-members:<projectId>:<partyId>` — SET of every member a kept
/// ticket of the party named, expiring with the last of their records (so
/// ending a whole party finds every member's search, whichever ticket
/// named it). Under no hash tag, like the tickets.
pub(crate) fn party_members_key(prefix: &str, project_id: &str, party_id: &str) -> String {
    concat(&[prefix, ":party-members:", project_id, ":", party_id])
}

/// `P:{<projectId>}:pending` — ZSET ticketId → expiry (Unix seconds) of
/// the project's tickets generated and not yet searching (the tier's
/// `maxPendingTickets`). A started search's ticket is removed from it after
/// the search is added, with the project's live count; if that step is
/// lost, the member goes when its ticket expires.
pub(crate) fn pending_key(prefix: &str, project_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}:pending"])
}

/// `P:{<projectId>}:started` — ZSET ticketId → expiry (Unix seconds) of
/// the project's tickets a search was started with, added with the
/// project's live count after the add (where the ticket leaves
/// [`pending_key`]), trimmed of expired members then and expiring with its
/// last member. It outlives a loss of the mode's slot, so a ticket whose
/// pool knows nothing of it reads `SEARCH_LOST` rather than `created`
/// (`TicketStore::started`).
pub(crate) fn started_key(prefix: &str, project_id: &str) -> String {
    concat(&[prefix, ":{", project_id, "}:started"])
}

/// `P:{<projectId>/M}:players`: see [`ModeKeys::players`] (without building
/// every other key of the mode).
pub(crate) fn players_key(prefix: &str, project_id: &str, mode: &str) -> String {
    concat(&[prefix, ":{", project_id, "/", mode, "}:players"])
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
    fn every_mode_key_shares_the_mode_hash_tag() {
        let keys = ModeKeys::new("mp", &ModeKey::new("prj_1", "ranked-5v5"));
        assert_eq!(keys.pool, "mp:{prj_1/ranked-5v5}:pool");
        let [current, next, previous] = keys.ended(7);
        assert_eq!(current, "mp:{prj_1/ranked-5v5}:ended:7");
        assert_eq!(next, "mp:{prj_1/ranked-5v5}:ended:8");
        assert_eq!(previous, "mp:{prj_1/ranked-5v5}:ended:6");
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
            &keys.backfills,
            &keys.backfill_seats,
            &keys.version,
            &keys.held,
            &keys.revoked,
            &keys.leaving,
        ] {
            assert!(key.starts_with("mp:{prj_1/ranked-5v5}:"), "{key}");
        }
        let mode = ModeKey::new("prj_1", "ranked-5v5");
        assert_eq!(
            players_key("mp", &mode.project_id, &mode.mode),
            keys.players
        );
        // The keys spanning the project's modes share the project's tag.
        let project = ProjectKeys::new("mp", "prj_1");
        for key in [&project.live, &project.counts, &project.versions] {
            assert!(key.starts_with("mp:{prj_1}:"), "{key}");
        }
        assert!(player_key("mp", "prj_1", "ana").starts_with("mp:{prj_1}:"));
        assert!(pending_key("mp", "prj_1").starts_with("mp:{prj_1}:"));
        assert!(started_key("mp", "prj_1").starts_with("mp:{prj_1}:"));
        // A ticket's record has no tag at all.
        let ticket = ticket_key("mp", "prj_1", "tkt_9");
        assert_eq!(ticket, "mp:ticket:prj_1:tkt_9");
        assert!(!ticket.contains('{'));
    }
}
