//! `idempotency_keys`: the first answer to a creating `POST` sent with an
//! `Idempotency-Key`, kept 24 hours for its retries.

use sea_orm::entity::prelude::*;

/// One key's request and (once it finished) its answer.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_keys")]
pub struct Model {
    /// Owning project.
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: String,
    /// The client's `Idempotency-Key` header.
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// Hex SHA-256 of the request (method, route, body): a retry must match.
    pub request_digest: String,
    /// Hex random seed the answer's encryption key is derived with.
    pub seed: String,
    /// The answer's HTTP status; `None` while the first request runs.
    pub status: Option<i32>,
    /// The answer's `Content-Type`.
    pub content_type: Option<String>,
    /// The answer's body, encrypted (base64).
    pub body: Option<String>,
    /// The answer's `Location` (a `201`'s created resource), if any.
    pub location: Option<String>,
    /// When the key was first used; the row is pruned 24 hours later.
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
