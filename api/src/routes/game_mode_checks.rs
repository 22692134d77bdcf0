//! The checks of a game mode's config before it is stored (create,
//! replace, preview, replay): the matching core's validation against the
//! project's current tier, the config's size, the webhook URL's safety,
//! and the body's name against the path's (docs/game-modes.md,
//! "Validation").

use crate::extract::MAX_BODY_BYTES;
use crate::state::AppState;
use matchplane_matchmaker::{validate, Code, FieldError, GameModeConfig, Tier};

/// Largest game-mode config, in bytes of its compact JSON as stored and
/// answered (its defaults filled in): 60 KiB. A `GET` answer is the config
/// plus the members the server sets, and must fit the request body limit
/// to be sent back with `PUT` (docs/config-as-code.md, "Create or update
/// with `PUT`").
pub const MAX_CONFIG_BYTES: usize = 60 * 1024;

/// The room the body limit keeps beyond [`MAX_CONFIG_BYTES`] for the
/// server-set members of a mode's answer (`version`, `createdAt`,
/// `updatedAt`, `hold`, `webhook.secret`, `webhook.status`): 4 KiB, more
/// than they can take at most (a test of `game_modes` checks it).
pub const SERVER_SET_ROOM: usize = MAX_BODY_BYTES - MAX_CONFIG_BYTES;

/// The size of `config` as stored and answered: its compact JSON. A
/// config that cannot be written as JSON is never stored either.
fn stored_bytes(config: &GameModeConfig) -> usize {
    serde_json::to_vec(config).map_or(usize::MAX, |json| json.len())
}

/// The error of a config over [`MAX_CONFIG_BYTES`], if it is.
pub(crate) fn too_large(config: &GameModeConfig) -> Option<FieldError> {
    let size = stored_bytes(config);
    (size > MAX_CONFIG_BYTES).then(|| {
        FieldError::new(
            "$",
            Code::ValidationError,
            format!(
                "the config is {size} bytes as stored (compact JSON, defaults filled in); \
                 at most {MAX_CONFIG_BYTES} (60 KiB), so that its GET answer, with the \
                 members the server adds, can be sent back within the 64 KiB body limit"
            ),
        )
    })
}

/// Core validation, the config's size and webhook URL safety; `running`
/// is the mode's stored config when it exists, whose webhook URL is not
/// refused for a rule added after it was stored (see
/// `matchplane_webhook::check_changed_webhook_url`).
pub(crate) async fn check(
    state: &AppState,
    config: &GameModeConfig,
    tier: &Tier,
    running: Option<&serde_json::Value>,
) -> Vec<FieldError> {
    let mut errors = match validate(config, tier) {
        Ok(()) => Vec::new(),
        Err(invalid) => invalid.0,
    };
    errors.extend(too_large(config));
    if let Some(url) = config
        .webhook
        .as_ref()
        .filter(|w| !w.use_project_endpoint)
        .and_then(|w| w.url.as_deref())
    {
        let kept = running
            .and_then(|c| c.pointer("/webhook/url"))
            .and_then(serde_json::Value::as_str);
        let allow_private = state.config.allow_private_webhooks;
        if let Err(why) =
            matchplane_webhook::check_changed_webhook_url(url, kept, allow_private).await
        {
            errors.push(FieldError::new(
                "webhook.url",
                Code::InvalidWebhookUrl,
                why.to_string(),
            ));
        }
    }
    errors
}

/// The error of a body whose `name` is not the path's: a mode that exists
/// cannot be renamed, a new one takes the path's name (docs/game-modes.md).
pub(crate) fn name_of_path(body: &str, path: &str, exists: bool) -> Option<FieldError> {
    (body != path).then(|| {
        let message = if exists {
            format!("game mode {path} cannot be renamed: the body's name is {body}, it must be {path}")
        } else {
            format!("the body's name is {body}; a mode created at …/game-modes/{path} must be named {path}")
        };
        FieldError::new("name", Code::ValidationError, message)
    })
}
