//! Erasing one player of a project (docs/retention.md, "Erasing a
//! player"): their rows deleted, their id taken out of the rows they share
//! with other players, in one transaction.

use crate::entities::{
    backfill, backfill_fill, match_, match_ticket, outbox_dead_letter, rating, search_recording,
    webhook_attempt, webhook_delivery,
};
use crate::repos::StoreError;
use sea_orm::sea_query::{Alias, Expr, LikeExpr, SimpleExpr};
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait,
    IntoActiveModel, QueryFilter, Select, Set, TransactionTrait,
};
use serde::Serialize;

mod redact;
pub use redact::{redact, redact_value};

/// What an erasure changed, table by table (rows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Erased {
    /// The player's ratings deleted, one per rated mode.
    pub ratings_deleted: u64,
    /// The player's seated tickets of stored matches deleted (with each
    /// ticket's `data`).
    pub match_tickets_deleted: u64,
    /// Stored matches that seated the player, now with a stand-in for
    /// their id and without their `data` and `attributes`.
    pub matches_redacted: u64,
    /// Backfill requests and fills that listed the player, redacted alike.
    pub backfills_redacted: u64,
    /// Webhook deliveries whose body mentioned the player, redacted alike
    /// (a delivery still pending is sent redacted).
    pub deliveries_redacted: u64,
    /// Outbox dead letters that mentioned the player, redacted alike.
    pub dead_letters_redacted: u64,
    /// Recorded search events of the player deleted.
    pub recorded_events_deleted: u64,
}

/// Erases `player_id` of `project_id`: deletes their ratings, seated
/// tickets and recorded search events (`recorded_hashes`: every hash the
/// player may carry in the project's recordings, the current one and the
/// previous release's; empty when the recording key is not known), and
/// redacts their id, `data` and `attributes` in the stored matches,
/// backfills, webhook deliveries and outbox dead letters that mention them
/// (see [`redact`]). Each redacted row gets its own `stand_in`ing id
/// (`erased-` and a fresh ULID), so rows of one erased player do not link
/// to each other; a webhook attempt of a redacted delivery whose answer
/// quoted the id loses that answer. Calling it again changes nothing.
///
/// # Errors
/// [`StoreError::Db`] on a database failure (nothing is changed then).
pub async fn erase<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    player_id: &str,
    recorded_hashes: &[String],
) -> Result<Erased, StoreError> {
    let txn = db.begin().await?;
    let mut erased = Erased {
        ratings_deleted: rating::Entity::delete_many()
            .filter(rating::Column::ProjectId.eq(project_id))
            .filter(rating::Column::PlayerId.eq(player_id))
            .exec(&txn)
            .await?
            .rows_affected,
        match_tickets_deleted: match_ticket::Entity::delete_many()
            .filter(match_ticket::Column::ProjectId.eq(project_id))
            .filter(match_ticket::Column::PlayerId.eq(player_id))
            .exec(&txn)
            .await?
            .rows_affected,
        ..Erased::default()
    };
    let quoted = like_pattern(&serde_json::Value::from(player_id).to_string());
    let p = player_id;

    use match_::Column as M;
    let matches = match_::Entity::find()
        .filter(match_::Column::ProjectId.eq(project_id))
        .filter(any_mentions(
            [M::Teams, M::Answers, M::Assignment, M::Attributes],
            &quoted,
        ));
    erased.matches_redacted = redact_rows(&txn, matches, |row| {
        let stand_in = stand_in();
        let (teams, answers) = (
            redact_value(&row.teams, p, &stand_in),
            redact_opt(row.answers.as_ref(), p, &stand_in),
        );
        let (assignment, attributes) = (
            redact_opt(row.assignment.as_ref(), p, &stand_in),
            redact_opt(row.attributes.as_ref(), p, &stand_in),
        );
        if teams.is_none() && answers.is_none() && assignment.is_none() && attributes.is_none() {
            return None;
        }
        let mut model = row.into_active_model();
        if let Some(v) = teams {
            model.teams = Set(v);
        }
        model.answers = answers.map_or(model.answers, |v| Set(Some(v)));
        model.assignment = assignment.map_or(model.assignment, |v| Set(Some(v)));
        model.attributes = attributes.map_or(model.attributes, |v| Set(Some(v)));
        Some(model)
    })
    .await?
    .len() as u64;

    let backfills = backfill::Entity::find()
        .filter(backfill::Column::ProjectId.eq(project_id))
        .filter(mentions(backfill::Column::Roster, &quoted));
    let fills = backfill_fill::Entity::find()
        .filter(backfill_fill::Column::ProjectId.eq(project_id))
        .filter(mentions(backfill_fill::Column::Teams, &quoted));
    erased.backfills_redacted = redact_rows(&txn, backfills, |row| {
        let roster = redact_value(&row.roster, p, &stand_in())?;
        let mut model = row.into_active_model();
        model.roster = Set(roster);
        Some(model)
    })
    .await?
    .len() as u64
        + redact_rows(&txn, fills, |row| {
            let teams = redact_value(&row.teams, p, &stand_in())?;
            let mut model = row.into_active_model();
            model.teams = Set(teams);
            Some(model)
        })
        .await?
        .len() as u64;

    let deliveries = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::ProjectId.eq(project_id))
        .filter(mentions(webhook_delivery::Column::Payload, &quoted));
    let redacted = redact_rows(&txn, deliveries, |row| {
        let payload = redact(&row.payload, p, &stand_in())?;
        let mut model = row.into_active_model();
        model.payload = Set(payload);
        Some(model)
    })
    .await?;
    erased.deliveries_redacted = redacted.len() as u64;
    if !redacted.is_empty() {
        webhook_attempt::Entity::update_many()
            .col_expr(
                webhook_attempt::Column::ResponseBody,
                Expr::value(Option::<String>::None),
            )
            .filter(webhook_attempt::Column::ProjectId.eq(project_id))
            .filter(
                webhook_attempt::Column::DeliveryId.is_in(redacted.iter().map(|d| d.id.as_str())),
            )
            .filter(mentions(
                webhook_attempt::Column::ResponseBody,
                &like_pattern(player_id),
            ))
            .exec(&txn)
            .await?;
    }

    let letters = outbox_dead_letter::Entity::find()
        .filter(outbox_dead_letter::Column::ProjectId.eq(project_id))
        .filter(mentions(outbox_dead_letter::Column::Record, &quoted));
    erased.dead_letters_redacted = redact_rows(&txn, letters, |row| {
        let record = redact(&row.record, p, &stand_in())?;
        let mut model = row.into_active_model();
        model.record = Set(record);
        Some(model)
    })
    .await?
    .len() as u64;

    for hash in recorded_hashes {
        erased.recorded_events_deleted += erase_recorded(&txn, project_id, hash).await?;
    }
    txn.commit().await?;
    Ok(erased)
}

/// Deletes the recorded events of the player hashed `hash` and replaces
/// the hash where other players' events name it (a party's members, a
/// block list) by a fresh random one.
async fn erase_recorded<C: ConnectionTrait>(
    txn: &C,
    project_id: &str,
    hash: &str,
) -> Result<u64, StoreError> {
    use search_recording::Column as R;
    let deleted = search_recording::Entity::delete_many()
        .filter(R::ProjectId.eq(project_id))
        .filter(R::PlayerHash.eq(hash))
        .exec(txn)
        .await?
        .rows_affected;
    let pattern = like_pattern(hash);
    let naming = search_recording::Entity::find()
        .filter(R::ProjectId.eq(project_id))
        .filter(any_mentions([R::PartyMembers, R::Attributes], &pattern))
        .all(txn)
        .await?;
    for row in naming {
        let other = ulid::Ulid::new().0.to_be_bytes();
        let other = hex::encode(&other[..16]);
        let swap = |text: &Option<String>| text.as_ref().map(|t| t.replace(hash, &other));
        let (members, attributes) = (swap(&row.party_members), swap(&row.attributes));
        let mut model = row.into_active_model();
        model.party_members = Set(members);
        model.attributes = Set(attributes);
        model.update(txn).await?;
    }
    Ok(deleted)
}

/// Writes `redacted(row)` for every row `found` selects for which it gives
/// a change (`None`: the row does not name the player after all); the rows
/// written.
async fn redact_rows<E, C>(
    txn: &C,
    found: Select<E>,
    mut redacted: impl FnMut(E::Model) -> Option<E::ActiveModel>,
) -> Result<Vec<E::Model>, StoreError>
where
    C: ConnectionTrait,
    E: EntityTrait,
    E::Model: IntoActiveModel<E::ActiveModel>,
    E::ActiveModel: ActiveModelTrait<Entity = E> + ActiveModelBehavior + Send,
{
    let mut written = Vec::new();
    for row in found.all(txn).await? {
        if let Some(model) = redacted(row) {
            written.push(model.update(txn).await?);
        }
    }
    Ok(written)
}

/// A fresh stand-in for an erased player's id in one row.
fn stand_in() -> String {
    format!("erased-{}", ulid::Ulid::new().to_string().to_lowercase())
}

fn redact_opt(
    value: Option<&serde_json::Value>,
    player: &str,
    stand_in: &str,
) -> Option<serde_json::Value> {
    value.and_then(|v| redact_value(v, player, stand_in))
}

/// A `LIKE … ESCAPE '!'` pattern of the rows whose text holds `needle`.
fn like_pattern(needle: &str) -> String {
    let mut pattern = String::with_capacity(needle.len() + 2);
    pattern.push('%');
    for c in needle.chars() {
        if matches!(c, '!' | '%' | '_') {
            pattern.push('!');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Whether `column`'s text matches `pattern` (a first sieve: SQLite's
/// `LIKE` ignores ASCII case; [`redact`] decides).
fn mentions(column: impl ColumnTrait, pattern: &str) -> SimpleExpr {
    Expr::col(column)
        .cast_as(Alias::new("text"))
        .like(LikeExpr::new(pattern).escape('!'))
}

fn any_mentions<C: ColumnTrait>(columns: impl IntoIterator<Item = C>, pattern: &str) -> Condition {
    columns
        .into_iter()
        .fold(Condition::any(), |c, col| c.add(mentions(col, pattern)))
}

#[cfg(test)]
mod tests {
    use super::like_pattern;

    #[test]
    fn like_patterns_escape_their_wildcards() {
        assert_eq!(like_pattern("a%b_c!d"), "%a!%b!_c!!d%");
    }
}
