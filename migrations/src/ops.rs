//! The schema operations the migrations repeat, each written once: create a
//! table or an index, add or drop a column, drop a table, and the foreign
//! key with `ON DELETE CASCADE` that ties most rows to their project.
//!
//! Column types come from sea-orm's own `sea_orm_migration::schema`
//! (`string(col)` is `varchar NOT NULL`, `string_null(col)` is `varchar
//! NULL`, `timestamp_with_time_zone(col)` is `timestamp with time zone NOT
//! NULL`, text on SQLite); these helpers only build the statements around
//! them, the same statements the long-hand sea-query builders make: a
//! migration that already ran must produce the same schema.

use crate::names::Projects;
use sea_orm_migration::prelude::*;

/// Creates `table` (a `Table::create()…` builder, without its
/// `.to_owned()`).
///
/// # Errors
/// The database error of the `CREATE TABLE`.
pub(crate) async fn create_table(
    manager: &SchemaManager<'_>,
    table: &mut TableCreateStatement,
) -> Result<(), DbErr> {
    manager.create_table(table.to_owned()).await
}

/// Drops `table`.
///
/// # Errors
/// The database error of the `DROP TABLE`.
pub(crate) async fn drop_table<T: IntoIden + 'static>(
    manager: &SchemaManager<'_>,
    table: T,
) -> Result<(), DbErr> {
    manager
        .drop_table(Table::drop().table(table).to_owned())
        .await
}

/// Creates the index `name` on `cols` of `table` (in that order).
///
/// # Errors
/// The database error of the `CREATE INDEX`.
pub(crate) async fn create_index<T, C>(
    manager: &SchemaManager<'_>,
    name: &str,
    table: T,
    cols: impl IntoIterator<Item = C>,
) -> Result<(), DbErr>
where
    T: IntoIden + 'static,
    C: IntoIden,
{
    manager.create_index(index(name, table, cols)).await
}

/// The index `name` on `cols` of `table` (in that order), for the index
/// [`create_index`] does not make (`index(…).unique()`).
pub(crate) fn index<T, C>(
    name: &str,
    table: T,
    cols: impl IntoIterator<Item = C>,
) -> IndexCreateStatement
where
    T: IntoIden + 'static,
    C: IntoIden,
{
    let mut index = Index::create();
    index.name(name).table(table);
    for col in cols {
        index.col(col);
    }
    index
}

/// A table's primary key over `cols` (in that order), for
/// `Table::create()….primary_key(&mut key([…]))`.
pub(crate) fn key<C: IntoIden>(cols: impl IntoIterator<Item = C>) -> IndexCreateStatement {
    let mut key = Index::create();
    for col in cols {
        key.col(col);
    }
    key
}

/// Adds `col` to `table`.
///
/// # Errors
/// The database error of the `ALTER TABLE … ADD COLUMN`.
pub(crate) async fn add_column<T: IntoIden + 'static>(
    manager: &SchemaManager<'_>,
    table: T,
    col: impl IntoColumnDef,
) -> Result<(), DbErr> {
    manager
        .alter_table(Table::alter().table(table).add_column(col).to_owned())
        .await
}

/// Drops `col` of `table`.
///
/// # Errors
/// The database error of the `ALTER TABLE … DROP COLUMN`.
pub(crate) async fn drop_column<T: IntoIden + 'static, C: IntoIden>(
    manager: &SchemaManager<'_>,
    table: T,
    col: C,
) -> Result<(), DbErr> {
    manager
        .alter_table(Table::alter().table(table).drop_column(col).to_owned())
        .await
}

/// `table.col` references `to.to_col`; deleting the referenced row deletes
/// this one (`ON DELETE CASCADE`).
pub(crate) fn cascade<T, C, R, K>(table: T, col: C, to: R, to_col: K) -> ForeignKeyCreateStatement
where
    T: IntoIden + 'static,
    C: IntoIden,
    R: IntoIden + 'static,
    K: IntoIden,
{
    ForeignKey::create()
        .from(table, col)
        .to(to, to_col)
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

/// `table.col` references `projects.id`, [`cascade`]: deleting a project
/// deletes its rows.
pub(crate) fn project_cascade<T: IntoIden + 'static, C: IntoIden>(
    table: T,
    col: C,
) -> ForeignKeyCreateStatement {
    cascade(table, col, Projects::Table, Projects::Id)
}
