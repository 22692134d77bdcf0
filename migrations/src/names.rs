//! Table and column names of the schema, as `sea-query` identifiers.
//!
//! The migrations build their statements from these names only, so they
//! never depend on the store's entities.

use sea_orm_migration::prelude::*;

/// `tiers`: the limits of each plan (docs/game-modes.md#tier-limits), keyed by name.
#[derive(DeriveIden, Clone, Copy)]
pub enum Tiers {
    Table,
    Name,
    MinCycleDurationSeconds,
    MinBaseTolerance,
    MinExpansionMultiplier,
    MaxMatchSize,
    MaxGameModes,
    MaxConcurrentSearches,
    RequestsPerSecond,
    CreatedAt,
    UpdatedAt,
}

/// `projects`: the tenants (docs/api-keys.md).
#[derive(DeriveIden, Clone, Copy)]
pub enum Projects {
    Table,
    Id,
    Name,
    Tier,
    CreatedAt,
    UpdatedAt,
}

/// `api_keys`: a project's keys, stored as SHA-256 hash plus visible prefix.
#[derive(DeriveIden, Clone, Copy)]
pub enum ApiKeys {
    Table,
    Id,
    ProjectId,
    Name,
    Prefix,
    Hash,
    CreatedAt,
    LastUsedAt,
    RevokedAt,
}

/// `game_modes`: the current config of each mode (docs/game-modes.md).
#[derive(DeriveIden, Clone, Copy)]
pub enum GameModes {
    Table,
    Id,
    ProjectId,
    Name,
    Config,
    Version,
    WebhookSecret,
    PreviousWebhookSecret,
    PreviousSecretExpiresAt,
    CreatedAt,
    UpdatedAt,
}

/// `game_mode_versions`: every version a mode ever had.
#[derive(DeriveIden, Clone, Copy)]
pub enum GameModeVersions {
    Table,
    GameModeId,
    Version,
    ProjectId,
    Name,
    Config,
    CreatedAt,
}

/// `matches`: every match formed (docs/architecture.md).
#[derive(DeriveIden, Clone, Copy)]
pub enum Matches {
    Table,
    Id,
    ProjectId,
    GameMode,
    GameModeVersion,
    Teams,
    Quality,
    CreatedAt,
}

/// `webhook_deliveries`: one event to deliver, with its retry state (docs/webhooks.md).
#[derive(DeriveIden, Clone, Copy)]
pub enum WebhookDeliveries {
    Table,
    Id,
    ProjectId,
    GameMode,
    MatchId,
    EventType,
    Payload,
    Status,
    AttemptCount,
    NextAttemptAt,
    LockedUntil,
    CreatedAt,
    UpdatedAt,
}

/// `webhook_attempts`: one HTTP attempt of a delivery (docs/webhooks.md).
#[derive(DeriveIden, Clone, Copy)]
pub enum WebhookAttempts {
    Table,
    Id,
    DeliveryId,
    ProjectId,
    AttemptedAt,
    StatusCode,
    LatencyMs,
    Error,
    ResponseBody,
}

/// `ratings`: one player's Glicko-2 rating in one game mode.
#[derive(DeriveIden, Clone, Copy)]
pub enum Ratings {
    Table,
    GameModeId,
    PlayerId,
    ProjectId,
    Rating,
    Deviation,
    Volatility,
    Games,
    RatedAt,
}

/// `rating_results`: the match ids already applied to a mode's ratings.
#[derive(DeriveIden, Clone, Copy)]
pub enum RatingResults {
    Table,
    GameModeId,
    MatchId,
    ProjectId,
    CreatedAt,
}
