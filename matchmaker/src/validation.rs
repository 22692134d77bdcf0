//! Validation of a [`GameModeConfig`] against a [`Tier`] (docs/game-modes.md).
//!
//! Every rule is checked and every failure reported at once, each with the
//! JSON path of the field and its documented code, so a studio fixes a config in
//! one round trip. Rules that need the project (name uniqueness, game-mode
//! quota) or the network (webhook URL safety) are checked by the API.

use crate::codes::Code;
use crate::config::{Algorithm, GameModeConfig, MatchShape};
use crate::tier::Tier;
use serde::{Deserialize, Serialize};

/// Longest allowed cycle (seconds), docs/game-modes.md.
pub const MAX_CYCLE_DURATION_SECONDS: f64 = 3600.0;
/// Largest `algorithm.baseTolerance` (percent), docs/game-modes.md.
pub const MAX_BASE_TOLERANCE: f64 = 100.0;
/// Largest `algorithm.expansionMultiplier`, docs/game-modes.md.
pub const MAX_EXPANSION_MULTIPLIER: f64 = 100.0;
/// Most teams a shape may have, docs/game-modes.md.
pub const MAX_TEAMS: usize = 64;
/// Longest allowed ticket lifetime (seconds): one day.
pub const MAX_TICKET_TTL_SECONDS: u32 = 86_400;
/// Longest `webhook.url` (bytes): it is stored with the mode and sent back
/// on every read.
pub const MAX_WEBHOOK_URL_BYTES: usize = 2_048;
/// Largest MMR magnitude anywhere (mode bounds, ticket values): far beyond
/// any rating scale, and small enough that sums and means over a match of
/// 200 players stay finite (a non-finite mean cannot be written as JSON).
pub const MAX_ABS_MMR: f64 = 1e9;

/// Whether `value` is a number with `|value| <= limit` (NaN is not).
pub fn within(value: f64, limit: f64) -> bool {
    value.abs() <= limit
}

/// One failed rule: `{"field","code","message"}` as in docs/error-codes.md's `errors`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldError {
    /// JSON path of the offending field, e.g. `algorithm.baseTolerance`.
    pub field: String,
    /// documented code of the rule.
    pub code: Code,
    /// Human-readable explanation with the limit that applied.
    pub message: String,
}

impl FieldError {
    /// Builds a field error.
    pub fn new(field: impl Into<String>, code: Code, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            code,
            message: message.into(),
        }
    }
}

/// All the failures of one config; never empty.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("game mode is invalid: {} error(s), first {}", .0.len(), .0[0].code)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    /// The most specific code: a tier-floor code if only one kind of
    /// failure, otherwise `VALIDATION_ERROR`.
    pub fn primary_code(&self) -> Code {
        let first = self.0[0].code;
        if self.0.iter().all(|e| e.code == first) {
            first
        } else {
            Code::ValidationError
        }
    }
}

/// Checks the name pattern `^[a-z0-9][a-z0-9_-]{0,62}$` of docs/game-modes.md.
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-')
}

/// Validates `config` against `tier`, returning every failure (docs/game-modes.md).
///
/// # Errors
/// [`ValidationErrors`] with one [`FieldError`] per broken rule.
pub fn validate(config: &GameModeConfig, tier: &Tier) -> Result<(), ValidationErrors> {
    let mut errors = Vec::new();
    let mut push = |field: &str, code: Code, message: String| {
        errors.push(FieldError::new(field, code, message));
    };

    if !is_valid_name(&config.name) {
        push(
            "name",
            Code::ValidationError,
            "name is 1 to 63 lower-case letters, digits, - and _, starting with a letter or digit (^[a-z0-9][a-z0-9_-]{0,62}$)".into(),
        );
    }

    let (shape, size) = match &config.match_shape {
        MatchShape::Fixed(shape) => {
            check_fixed_shape(shape, "matchShape", tier, &mut push);
            (shape.clone(), shape.iter().map(|s| u64::from(*s)).sum())
        }
        MatchShape::Flexible(flex) => {
            crate::thin_validation::check_flexible(flex, config, tier, &mut push);
            (config.match_shape.caps(), config.match_shape.size())
        }
    };
    crate::thin_validation::check_relaxations(config, &mut push);
    crate::thin_validation::check_bots(config, &mut push);
    crate::latency::check_regions(config, &mut push);
    crate::acceptance::check_acceptance(config, &mut push);
    crate::assignment::check_assignment(config, &mut push);
    crate::backfill::config::check_backfill(config, &mut push);
    crate::recording::check_recording(config, tier, &mut push);
    crate::rules::check::check_rules(config, &mut push);
    crate::roles::check_composition(config, &mut push);

    let cycle = config.matchmaking_cycle_duration_seconds;
    if !cycle.is_finite() || cycle > MAX_CYCLE_DURATION_SECONDS {
        push(
            "matchmakingCycleDurationSeconds",
            Code::ValidationError,
            format!("must be a number of seconds at most {MAX_CYCLE_DURATION_SECONDS}"),
        );
    } else if cycle < tier.min_cycle_duration_seconds {
        push(
            "matchmakingCycleDurationSeconds",
            Code::CycleDurationBelowTierFloor,
            format!(
                "{cycle} s is below tier {}'s floor of {} s",
                tier.name, tier.min_cycle_duration_seconds
            ),
        );
    }

    match &config.algorithm {
        Algorithm::Mmr {
            min_mmr,
            max_mmr,
            base_tolerance,
            expansion_multiplier,
            max_tolerance,
        } => {
            crate::thin_validation::check_max_tolerance(*base_tolerance, *max_tolerance, &mut push);
            if !within(*min_mmr, MAX_ABS_MMR)
                || !within(*max_mmr, MAX_ABS_MMR)
                || min_mmr >= max_mmr
            {
                push(
                    "algorithm.maxMmr",
                    Code::ValidationError,
                    format!(
                        "minMmr and maxMmr must be within ±{MAX_ABS_MMR:e} with minMmr < maxMmr"
                    ),
                );
            }
            if !base_tolerance.is_finite() || *base_tolerance > MAX_BASE_TOLERANCE {
                push(
                    "algorithm.baseTolerance",
                    Code::ValidationError,
                    "baseTolerance is a percent at most 100".into(),
                );
            } else if *base_tolerance < tier.min_base_tolerance || *base_tolerance < 0.0 {
                push(
                    "algorithm.baseTolerance",
                    Code::ToleranceBelowTierFloor,
                    format!(
                        "{base_tolerance}% is below tier {}'s floor of {}%",
                        tier.name, tier.min_base_tolerance
                    ),
                );
            }
            let floor = tier.min_expansion_multiplier.max(1.0);
            if !expansion_multiplier.is_finite() || *expansion_multiplier > MAX_EXPANSION_MULTIPLIER
            {
                push(
                    "algorithm.expansionMultiplier",
                    Code::ValidationError,
                    "expansionMultiplier must be at most 100".into(),
                );
            } else if *expansion_multiplier < floor {
                push(
                    "algorithm.expansionMultiplier",
                    Code::ExpansionBelowTierFloor,
                    format!(
                        "{expansion_multiplier} is below tier {}'s floor of {floor}",
                        tier.name
                    ),
                );
            }
        }
        Algorithm::Ping { max_delta } => {
            if !max_delta.is_finite() || *max_delta <= 0.0 || *max_delta > 1000.0 {
                push(
                    "algorithm.maxDelta",
                    Code::ValidationError,
                    "maxDelta is milliseconds in (0, 1000]".into(),
                );
            }
        }
        Algorithm::Fifo {} => {}
    }

    let parties = &config.parties;
    let shape_ok = !shape.is_empty() && shape.iter().all(|s| *s > 0);
    if parties.max_size == 0 {
        push(
            "parties.maxSize",
            Code::PartySizeExceedsShape,
            "maxSize must be at least 1".into(),
        );
    } else if !shape_ok || config.match_shape.flexible().is_some() {
        // A flexible shape's party rule is checked with the shape.
        // The shape's own error says it all; seats cannot be judged.
    } else if parties.keep_together && parties.max_size > config.largest_team() {
        push(
            "parties.maxSize",
            Code::PartySizeExceedsShape,
            format!(
                "a kept-together party of {} cannot sit on a team of at most {}",
                parties.max_size,
                config.largest_team()
            ),
        );
    } else if u64::from(parties.max_size) > size {
        push(
            "parties.maxSize",
            Code::PartySizeExceedsShape,
            format!(
                "a party of {} exceeds the match size {size}",
                parties.max_size
            ),
        );
    }

    if let crate::config::PartyMmr::Blend(crate::config::PartyMmrBlend { blend }) = parties.mmr {
        if !(0.0..=1.0).contains(&blend) {
            push(
                "parties.mmr.blend",
                Code::ValidationError,
                "blend is a number from 0 to 1".into(),
            );
        }
    }

    if !(5..=3600).contains(&parties.incomplete_timeout_seconds) {
        push(
            "parties.incompleteTimeoutSeconds",
            Code::ValidationError,
            "incompleteTimeoutSeconds is a whole number of seconds from 5 to 3600".into(),
        );
    }

    if config.ticket_ttl_seconds == 0 || config.ticket_ttl_seconds > MAX_TICKET_TTL_SECONDS {
        push(
            "ticketTtlSeconds",
            Code::ValidationError,
            format!("ticketTtlSeconds must be 1 to {MAX_TICKET_TTL_SECONDS}"),
        );
    }

    if let Some(webhook) = &config.webhook {
        match (&webhook.url, webhook.use_project_endpoint) {
            // docs/webhooks.md, "One endpoint for every mode of a project":
            // the project's URL, never one of the mode's own beside it.
            (Some(_), true) => push(
                "webhook.url",
                Code::ValidationError,
                "webhook.url is not allowed with webhook.useProjectEndpoint: the mode delivers to the project's endpoint".into(),
            ),
            (None, true) => {}
            (None, false) => push(
                "webhook.url",
                Code::InvalidWebhookUrl,
                "webhook.url is required unless webhook.useProjectEndpoint is true".into(),
            ),
            (Some(url), false) if url.trim().is_empty() => push(
                "webhook.url",
                Code::InvalidWebhookUrl,
                "webhook.url is empty".into(),
            ),
            (Some(url), false) if url.len() > MAX_WEBHOOK_URL_BYTES => push(
                "webhook.url",
                Code::InvalidWebhookUrl,
                format!(
                    "webhook.url is {} bytes; at most {MAX_WEBHOOK_URL_BYTES}",
                    url.len()
                ),
            ),
            (Some(_), false) => {}
        }
    }

    if let Some(ratings) = &config.ratings {
        errors.extend(ratings.validate());
    }

    if errors.is_empty() {
        Ok(())
    } else {
        Err(ValidationErrors(errors))
    }
}

/// The array `matchShape` rules of docs/game-modes.md (also a relaxation's shape, at
/// `field`): 1..=64 teams, each >= 1, sum >= 2 and <= the tier's
/// `maxMatchSize`.
pub(crate) fn check_fixed_shape(
    shape: &[u32],
    field: &str,
    tier: &Tier,
    push: &mut impl FnMut(&str, Code, String),
) {
    if shape.is_empty() || shape.len() > MAX_TEAMS {
        push(
            field,
            Code::ValidationError,
            format!(
                "{field} must have 1 to {MAX_TEAMS} teams, has {}",
                shape.len()
            ),
        );
    }
    for (i, seats) in shape.iter().enumerate() {
        if *seats == 0 {
            push(
                &format!("{field}[{i}]"),
                Code::ValidationError,
                "every team needs at least one player".into(),
            );
        }
    }
    let size: u64 = shape.iter().map(|s| u64::from(*s)).sum();
    if size < 2 {
        push(
            field,
            Code::ValidationError,
            format!("a match needs at least 2 players, the shape sums to {size}"),
        );
    }
    if size > u64::from(tier.max_match_size) {
        push(
            field,
            Code::MatchSizeLimitExceeded,
            format!(
                "the shape sums to {size} players, tier {} allows {}",
                tier.name, tier.max_match_size
            ),
        );
    }
}
