//! The checks of a game mode's config before it is stored (create,
//! replace, preview, replay): the matching core's validation against the
//! project's current tier, the webhook URL's safety, and the body's name
//! against the path's (docs/game-modes.md, "Validation").

use crate::state::AppState;
use matchplane_matchmaker::{validate, Code, FieldError, GameModeConfig, Tier};

/// Core validation plus webhook URL safety.
pub(crate) async fn check(
    state: &AppState,
    config: &GameModeConfig,
    tier: &Tier,
) -> Vec<FieldError> {
    let mut errors = match validate(config, tier) {
        Ok(()) => Vec::new(),
        Err(invalid) => invalid.0,
    };
    if let Some(url) = config
        .webhook
        .as_ref()
        .filter(|w| !w.use_project_endpoint)
        .and_then(|w| w.url.as_deref())
    {
        if let Err(why) =
            matchplane_webhook::check_webhook_url(url, state.config.allow_private_webhooks).await
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
