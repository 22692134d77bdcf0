//! Webhook URL safety (docs/game-modes.md, `INVALID_WEBHOOK_URL`): the one policy, with
//! the one refusal type [`Refusal`], applied when a game mode is configured
//! ([`check_webhook_url`]) and again at every delivery ([`check_url`] on the
//! URL, then [`crate::deliver::CheckedResolver`] on the addresses a named
//! host resolves to, the very ones connected to), so DNS rebinding cannot
//! get past a check made at configuration time. Which addresses are refused
//! is [`crate::address::is_forbidden`].
//!
//! A name that does not resolve at configuration time (NXDOMAIN, no DNS
//! server, no network, a lookup slower than [`RESOLVE_TIMEOUT`]) is
//! accepted: a mode is often configured before its endpoint's DNS exists,
//! or on a machine without network. Its deliveries fail (and are retried)
//! until the name resolves, and the mode's webhook shows as failing; the
//! check at delivery refuses it if it then resolves to a private address,
//! and that delivery ends `failed` at once.
//!
//! With private webhooks allowed (operator setting
//! `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS=true`) any `http`/`https` URL passes.
//!
//! A refusal's message goes to the tenant (the `422`, the attempt log, the
//! webhook's status, the test event's answer). It names an IP address the
//! studio wrote in its URL, never one the installation's resolver gave for
//! a name: that would map the operator's internal DNS for any tenant
//! (docs/webhooks.md, "Which URLs are accepted"). That address goes to the
//! operator's log only ([`Refusal::Resolved`]).

use crate::address::is_forbidden;
use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;
use url::{Host, Url};

/// How long resolving a webhook host may take at configuration time.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a webhook URL is refused, at configuration or at delivery; the
/// message names no URL and is safe to show the tenant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not a URL at all.
    #[error("not a valid absolute URL")]
    Malformed,
    /// A space or a control character (tab, CR, LF, …) anywhere in the
    /// URL: a URL parser drops or encodes them, so the URL shown would not
    /// be the URL called.
    #[error("the URL contains a space or a control character; encode a space in a path as %20")]
    Blank,
    /// Not `https` (or `http` while private webhooks are allowed); the
    /// flag says whether `http` was allowed, so the message names every
    /// scheme that is.
    #[error(
        "the scheme `{0}` is not allowed; the scheme must be {allowed}",
        allowed = if *.1 { "http or https" } else { "https" }
    )]
    Scheme(String, bool),
    /// The URL has no host.
    #[error("the URL has no host")]
    NoHost,
    /// The URL names port 0, where nothing can be reached.
    #[error(
        "the port 0 is not allowed; give a port from 1 to 65535, or none for the scheme's default"
    )]
    Port,
    /// A host name that is never public, such as `localhost`.
    #[error("the host `{0}` is not a public host")]
    Host(String),
    /// The host is an IP address, as written in the URL, that is not public.
    #[error("the host is a non-public address ({0})")]
    Address(IpAddr),
    /// The host name resolves to a non-public address. The message names
    /// the host the studio wrote, never the address: `address` is what the
    /// installation's resolver answered, for the operator's log only (see
    /// the module doc).
    #[error("the host `{host}` resolves to a non-public address")]
    Resolved {
        /// The host name, as resolved (lower case, no trailing dot).
        host: String,
        /// The first non-public address it resolved to.
        address: IpAddr,
    },
}

impl Refusal {
    /// The refusal of `host` resolving to the non-public `address`, logged
    /// for the operator with the address (which the refusal's message,
    /// shown to the tenant, leaves out).
    pub(crate) fn resolved(host: String, address: IpAddr) -> Self {
        tracing::warn!(
            host = %host,
            address = %address,
            "webhook host resolves to a non-public address; refused"
        );
        Self::Resolved { host, address }
    }
}

/// The check of the URL itself: the scheme, a port other than 0, a host,
/// and an IP-literal host public unless `allow_private`. A named host is
/// checked where it is resolved ([`check_webhook_url`],
/// [`crate::deliver::CheckedResolver`]).
///
/// # Errors
/// The [`Refusal`].
pub fn check_url(url: &Url, allow_private: bool) -> Result<(), Refusal> {
    let scheme_ok = match url.scheme() {
        "https" => true,
        "http" => allow_private,
        _ => false,
    };
    if !scheme_ok {
        return Err(Refusal::Scheme(url.scheme().to_owned(), allow_private));
    }
    if url.port() == Some(0) {
        return Err(Refusal::Port);
    }
    let ip = match url.host() {
        None => return Err(Refusal::NoHost),
        Some(Host::Domain(_)) => return Ok(()),
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
    };
    if !allow_private && is_forbidden(ip) {
        return Err(Refusal::Address(ip));
    }
    Ok(())
}

/// Checks a webhook URL when a mode is configured: [`check_url`], then a
/// host name that resolves only to public addresses, or does not resolve
/// at all yet (see the module doc). With `allow_private` any
/// `http`/`https` URL passes.
///
/// # Errors
/// The [`Refusal`] saying why the URL is refused.
pub async fn check_webhook_url(raw: &str, allow_private: bool) -> Result<Url, Refusal> {
    check_webhook_url_with(raw, allow_private, system_resolve).await
}

/// [`check_webhook_url`] for a URL that may be the one already stored
/// (`kept`): that one is not refused for a space or a control character
/// (see [`blank`]), every other rule applies.
///
/// # Errors
/// As [`check_webhook_url`].
pub async fn check_changed_webhook_url(
    raw: &str,
    kept: Option<&str>,
    allow_private: bool,
) -> Result<Url, Refusal> {
    if kept == Some(raw) {
        // As delivery reads it: parsed, its blanks dropped or encoded.
        let url = Url::parse(raw).map_err(|_| Refusal::Malformed)?;
        return check_webhook_url_with(url.as_str(), allow_private, system_resolve).await;
    }
    check_webhook_url(raw, allow_private).await
}

/// The system resolver: every address of `host` (port `port`).
async fn system_resolve(host: String, port: u16) -> std::io::Result<Vec<IpAddr>> {
    Ok(tokio::net::lookup_host((host.as_str(), port))
        .await?
        .map(|addr| addr.ip())
        .collect())
}

/// Refuses a URL with a space or a control character anywhere in it
/// ([`Refusal::Blank`]): [`check_webhook_url`]'s first check, which
/// [`check_changed_webhook_url`] skips for a URL stored before the rule
/// (it delivers as the parser reads it, and refusing it would block every
/// other change).
fn blank(raw: &str) -> Result<(), Refusal> {
    if raw.chars().any(|c| c == ' ' || c.is_control()) {
        Err(Refusal::Blank)
    } else {
        Ok(())
    }
}

/// [`check_webhook_url`] resolving names with `resolve` (the host in lower
/// case without a trailing dot, and the port), which tests replace.
///
/// # Errors
/// The [`Refusal`] saying why the URL is refused.
pub async fn check_webhook_url_with<F, Fut>(
    raw: &str,
    allow_private: bool,
    resolve: F,
) -> Result<Url, Refusal>
where
    F: FnOnce(String, u16) -> Fut,
    Fut: Future<Output = std::io::Result<Vec<IpAddr>>>,
{
    blank(raw)?;
    let url = Url::parse(raw).map_err(|_| Refusal::Malformed)?;
    check_url(&url, allow_private)?;
    let Some(Host::Domain(domain)) = url.host() else {
        return Ok(url);
    };
    if allow_private {
        return Ok(url);
    }
    let lower = domain.trim_end_matches('.').to_ascii_lowercase();
    if lower == "localhost" || lower.ends_with(".localhost") || !lower.contains('.') {
        return Err(Refusal::Host(domain.to_owned()));
    }
    let port = url.port_or_known_default().unwrap_or(443);
    let addresses = match tokio::time::timeout(RESOLVE_TIMEOUT, resolve(lower.clone(), port)).await
    {
        Ok(Ok(found)) => found,
        // Not resolvable now: accepted, checked again at delivery.
        Ok(Err(_)) | Err(_) => Vec::new(),
    };
    match addresses.into_iter().find(|ip| is_forbidden(*ip)) {
        Some(ip) => Err(Refusal::resolved(lower, ip)),
        None => Ok(url),
    }
}

#[cfg(test)]
mod tests;
