//! Keys shared by every process of one installation (table
//! `instance_keys`): drawn at random by the first process that needs one,
//! stored, and read by every other, so that the API instances and the
//! workers agree without an operator setting anything.
//!
//! The one key today is [`RECORDING`], the key of the recordings'
//! player-id hashes when `MATCHPLANE_RECORDING_KEY` is not set
//! (docs/retention.md, "Erasing a player"): with it, a player hashes the
//! same in every process and after every restart, so an erasure finds all
//! their recorded events.

use crate::repos::StoreError;
use rand::RngCore;
use sea_orm::sea_query::{Alias, Expr, OnConflict, Query};
use sea_orm::{ConnectionTrait, TryGetable};

/// The name of the recording key's row.
pub const RECORDING: &str = "recording";

/// Bytes of randomness in a drawn key (written as 64 hex characters).
const KEY_BYTES: usize = 32;

/// The table.
fn table() -> Alias {
    Alias::new("instance_keys")
}

/// The key named `name`: the stored one, or a new random one (32 bytes as
/// lower-case hex) stored by this call when there is none yet. Processes
/// starting at once all get the same key: the first insert wins, and the
/// others' inserts change nothing.
///
/// # Errors
/// [`StoreError::Db`] on a database failure; [`StoreError::Corrupt`] when
/// the row is still missing after the insert.
pub async fn get_or_create<C: ConnectionTrait>(db: &C, name: &str) -> Result<String, StoreError> {
    let (name_col, value_col) = (Alias::new("name"), Alias::new("value"));
    let mut drawn = [0u8; KEY_BYTES];
    rand::thread_rng().fill_bytes(&mut drawn);
    let mut insert = Query::insert();
    insert
        .into_table(table())
        .columns([name_col.clone(), value_col.clone()])
        .values([name.into(), hex::encode(drawn).into()])
        .map_err(|e| StoreError::Corrupt(e.to_string()))?
        .on_conflict(OnConflict::column(name_col.clone()).do_nothing().to_owned());
    let backend = db.get_database_backend();
    // Without RETURNING, `do_nothing` reads the same on both backends.
    db.execute(backend.build(&insert)).await?;
    let select = Query::select()
        .column(value_col)
        .from(table())
        .and_where(Expr::col(name_col).eq(name))
        .to_owned();
    let row = db.query_one(backend.build(&select)).await?;
    let value = row
        .map(|row| String::try_get_by_index(&row, 0))
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("instance key {name}: {e:?}")))?;
    value.ok_or_else(|| StoreError::Corrupt(format!("instance key {name} was not stored")))
}
