//! A game mode's recorded search events ([`crate::entities::search_recording`]):
//! written in batches by the API's recording writer, read by time window
//! (the recording route, replays, the config guard) in pages, and pruned
//! past the mode's `recording.retentionDays` in batches by the worker.
//!
//! Player and party ids are never stored: [`IdHasher`] replaces each with a
//! keyed hash of the project and the id, the same in the API (starts,
//! cancels, the API's ends) and the worker (matches, expiries, re-check
//! failures) when both are given the same `MATCHPLANE_RECORDING_KEY`, and
//! different in every project, so a player id does not link the
//! recordings of two projects. The hashes are pseudonyms, not anonymity:
//! times and values can still single a player out to someone who holds the
//! studio's other data.

use crate::entities::search_recording::{self, Entity as Recordings};
use crate::repos::StoreError;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

/// What a recorded row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A search started.
    Start,
    /// The player cancelled (or closed the socket).
    Cancel,
    /// The search ended otherwise: expired or failed (see `outcome`).
    End,
}

impl Kind {
    /// The stored number.
    pub fn code(self) -> i16 {
        match self {
            Kind::Start => 0,
            Kind::Cancel => 1,
            Kind::End => 2,
        }
    }

    /// The kind of a stored number (`None` for one this build does not know).
    pub fn of(code: i16) -> Option<Self> {
        match code {
            0 => Some(Kind::Start),
            1 => Some(Kind::Cancel),
            2 => Some(Kind::End),
            _ => None,
        }
    }
}

/// One event to store (ids already hashed).
#[derive(Debug, Clone, PartialEq)]
pub struct NewRecording {
    /// Owning project.
    pub project_id: String,
    /// Game mode name.
    pub game_mode: String,
    /// When (Unix milliseconds).
    pub at_ms: i64,
    /// What.
    pub kind: Kind,
    /// Keyed hash of the player id.
    pub player_hash: String,
    /// MMR (starts).
    pub mmr: Option<f64>,
    /// Latencies written `region=ms|…` (starts).
    pub latencies: Option<String>,
    /// Keyed hash of the party id (starts in a party).
    pub party_hash: Option<String>,
    /// Members' hashed ids, `|` separated.
    pub party_members: Option<String>,
    /// An end's outcome.
    pub outcome: Option<String>,
    /// A start's declared attributes as JSON text (`playerSet` entries
    /// hashed).
    pub attributes: Option<String>,
}

impl NewRecording {
    /// An event of `kind` of the player hashed `player_hash` in
    /// `project_id`'s mode `game_mode` at `at_ms` (Unix milliseconds), with
    /// nothing else recorded: the base a start or an end fills in
    /// (`NewRecording { mmr, ..NewRecording::event(…) }`).
    pub fn event(
        project_id: &str,
        game_mode: &str,
        kind: Kind,
        player_hash: String,
        at_ms: i64,
    ) -> Self {
        Self {
            project_id: project_id.to_owned(),
            game_mode: game_mode.to_owned(),
            at_ms,
            kind,
            player_hash,
            mmr: None,
            latencies: None,
            party_hash: None,
            party_members: None,
            outcome: None,
            attributes: None,
        }
    }
}

/// The keyed hash of the recorded ids: HMAC-SHA-256 under the operator's
/// recording key of the project id, a NUL byte and the id, truncated to 16
/// bytes, lower-case hex (32 characters). The project is part of what is
/// hashed, so the same id (a Steam id, an email) hashes differently in
/// every project; a project id (`prj_` and a ULID) never holds a NUL, so
/// no two (project, id) pairs hash the same input.
#[derive(Clone)]
pub struct IdHasher {
    mac: hmac::Hmac<sha2::Sha256>,
}

impl std::fmt::Debug for IdHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdHasher(<key>)")
    }
}

impl IdHasher {
    /// A hasher under `key`; `None` only if the MAC refuses the key
    /// (HMAC takes keys of every length, so in practice never).
    pub fn new(key: &[u8]) -> Option<Self> {
        use hmac::Mac;
        let mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).ok()?;
        Some(Self { mac })
    }

    /// The hash of `id` in `project_id`'s recordings: 32 lower-case hex
    /// characters.
    pub fn hash(&self, project_id: &str, id: &str) -> String {
        use hmac::Mac;
        let mut mac = self.mac.clone();
        mac.update(project_id.as_bytes());
        mac.update(&[0]);
        mac.update(id.as_bytes());
        hex::encode(&mac.finalize().into_bytes()[..16])
    }

    /// The hash the previous release gave `id` in every project's
    /// recordings (the keyed hash of the id alone, 32 lower-case hex
    /// characters): rows recorded before an upgrade carry it, so erasing a
    /// player looks for it too (docs/retention.md, "Erasing a player").
    pub fn earlier_hash(&self, id: &str) -> String {
        use hmac::Mac;
        let mut mac = self.mac.clone();
        mac.update(id.as_bytes());
        hex::encode(&mac.finalize().into_bytes()[..16])
    }

    /// The row of the end of `player_id`'s search of `project_id`'s mode
    /// `game_mode` at `at_ms` (Unix milliseconds): `outcome` is
    /// `matched`, `expired`, `expired:<reason>` or `failed:<code>`.
    pub fn end_row(
        &self,
        project_id: &str,
        game_mode: &str,
        player_id: &str,
        outcome: String,
        at_ms: i64,
    ) -> NewRecording {
        let hash = self.hash(project_id, player_id);
        NewRecording {
            outcome: Some(outcome),
            ..NewRecording::event(project_id, game_mode, Kind::End, hash, at_ms)
        }
    }
}

mod write;
pub use write::{
    insert_batch, insert_batch_of_live_modes, insert_batch_of_live_projects, BatchWritten,
};

/// Rows one read returns at most.
pub const MAX_PAGE: u64 = 10_000;

/// The one way into a mode's rows.
fn scoped(project_id: &str, game_mode: &str) -> sea_orm::Select<Recordings> {
    Recordings::find()
        .filter(search_recording::Column::ProjectId.eq(project_id))
        .filter(search_recording::Column::GameMode.eq(game_mode))
}

/// Where a page of [`window`] starts: after this row (`at_ms`, `id`).
pub type Cursor = (i64, i64);

/// The mode's rows with `from_ms <= at_ms < to_ms`, in time order (ties in
/// insertion order), after `after` when given, `limit` at most (capped at
/// [`MAX_PAGE`]). The next page starts after the last row's `(at_ms, id)`.
///
/// # Errors
/// A database failure.
pub async fn window<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    (from_ms, to_ms): (i64, i64),
    after: Option<Cursor>,
    limit: u64,
) -> Result<Vec<search_recording::Model>, StoreError> {
    use search_recording::Column as C;
    let mut select = scoped(project_id, game_mode)
        .filter(C::AtMs.gte(from_ms))
        .filter(C::AtMs.lt(to_ms));
    if let Some((at, id)) = after {
        select = select.filter(
            Condition::any()
                .add(C::AtMs.gt(at))
                .add(Condition::all().add(C::AtMs.eq(at)).add(C::Id.gt(id))),
        );
    }
    Ok(select
        .order_by_asc(C::AtMs)
        .order_by_asc(C::Id)
        .limit(limit.min(MAX_PAGE))
        .all(db)
        .await?)
}

/// How many search starts the mode recorded with `from_ms <= at_ms < to_ms`.
///
/// # Errors
/// A database failure.
pub async fn starts_in<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    (from_ms, to_ms): (i64, i64),
) -> Result<u64, StoreError> {
    use search_recording::Column as C;
    Ok(scoped(project_id, game_mode)
        .filter(C::Event.eq(Kind::Start.code()))
        .filter(C::AtMs.gte(from_ms))
        .filter(C::AtMs.lt(to_ms))
        .count(db)
        .await?)
}

/// Every mode with recorded rows, as `(project_id, game_mode)`.
///
/// # Errors
/// A database failure.
pub async fn modes<C: ConnectionTrait>(db: &C) -> Result<Vec<(String, String)>, StoreError> {
    use search_recording::Column as C;
    Ok(Recordings::find()
        .select_only()
        .columns([C::ProjectId, C::GameMode])
        .distinct()
        .into_tuple()
        .all(db)
        .await?)
}

/// Deletes every row of the mode (the mode is deleted: a mode created
/// again under its name is a new mode, docs/game-modes.md); returns how
/// many.
///
/// # Errors
/// A database failure.
pub async fn forget<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
) -> Result<u64, StoreError> {
    use search_recording::Column as C;
    let deleted = Recordings::delete_many()
        .filter(C::ProjectId.eq(project_id))
        .filter(C::GameMode.eq(game_mode))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected)
}

/// Deletes up to `batch` of the mode's rows older than `before_ms`, oldest
/// first; returns how many (fewer than `batch`: nothing older is left).
///
/// # Errors
/// A database failure.
pub async fn prune<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    before_ms: i64,
    batch: u64,
) -> Result<u64, StoreError> {
    use search_recording::Column as C;
    let ids: Vec<i64> = scoped(project_id, game_mode)
        .select_only()
        .column(C::Id)
        .filter(C::AtMs.lt(before_ms))
        .order_by_asc(C::AtMs)
        .limit(batch)
        .into_tuple()
        .all(db)
        .await?;
    if ids.is_empty() {
        return Ok(0);
    }
    let deleted = Recordings::delete_many()
        .filter(Expr::col(C::Id).is_in(ids))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_escapes_separators_and_writes_none_as_null() {
        let row = NewRecording {
            project_id: "prj_1".into(),
            game_mode: "duel".into(),
            at_ms: 1_700_000_000_123,
            kind: Kind::End,
            player_hash: "ab\tc\\d\ne".into(),
            mmr: Some(1510.5),
            latencies: None,
            party_hash: None,
            party_members: Some("x|y".into()),
            outcome: Some("failed:MMR_OUT_OF_RANGE".into()),
            attributes: None,
        };
        assert_eq!(
            write::copy_text(&[row]),
            "prj_1\tduel\t1700000000123\t2\tab\\tc\\\\d\\ne\t1510.5\t\\N\t\\N\tx|y\tfailed:MMR_OUT_OF_RANGE\t\\N\n"
        );
    }

    #[test]
    fn an_id_hashes_per_project_and_the_same_within_one() {
        let hasher = IdHasher::new(b"key").unwrap();
        let steam = "76561198000000000";
        assert_ne!(hasher.hash("prj_a", steam), hasher.hash("prj_b", steam));
        assert_eq!(hasher.hash("prj_a", steam), hasher.hash("prj_a", steam));
        assert_eq!(hasher.hash("prj_a", steam).len(), 32);
        // The separator keeps (project, id) pairs apart.
        assert_ne!(hasher.hash("prj_a", "bc"), hasher.hash("prj_ab", "c"));
        assert_eq!(
            hasher
                .end_row("prj_a", "duel", steam, "matched".into(), 0)
                .player_hash,
            hasher.hash("prj_a", steam)
        );
    }
}
