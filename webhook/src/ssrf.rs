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
/// ([`Refusal::Blank`]): [`check_webhook_url`]'s first check, which a
/// caller skips for a URL stored before the rule (it delivers as the
/// parser reads it, and refusing it would block every other change).
///
/// # Errors
/// [`Refusal::Blank`].
pub fn blank(raw: &str) -> Result<(), Refusal> {
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
mod tests {
    use super::*;

    fn check(url: &str, allow_private: bool) -> Result<(), Refusal> {
        check_url(&Url::parse(url).unwrap(), allow_private)
    }

    #[test]
    fn refuses_internal_literals_and_plain_http() {
        assert_eq!(
            check("http://93.184.216.34/", false),
            Err(Refusal::Scheme("http".into(), false))
        );
        assert!(matches!(
            check("https://127.0.0.1/", false),
            Err(Refusal::Address(_))
        ));
        assert!(matches!(
            check("https://[fd00::1]/", false),
            Err(Refusal::Address(_))
        ));
        assert_eq!(check("https://93.184.216.34/", false), Ok(()));
        assert_eq!(check("https://hooks.example.com/", false), Ok(()));
        assert_eq!(check("http://127.0.0.1:8080/", true), Ok(()));
        assert!(check("ftp://127.0.0.1/", true).is_err());
    }

    #[tokio::test]
    async fn a_space_or_control_character_is_refused_whatever_the_host() {
        for allow_private in [false, true] {
            for url in [
                "https://hooks.example.com/a\r\nX-Injected: 1",
                "https://hooks.example.com/a\tb",
                " https://hooks.example.com/",
                "https://hooks.example.com/a b",
                "https://hooks.example.com/\u{0}",
            ] {
                assert_eq!(
                    check_webhook_url(url, allow_private).await,
                    Err(Refusal::Blank),
                    "{url:?}"
                );
            }
        }
        // The URL already stored is not refused for it: it delivers as
        // the parser reads it, and other changes must go on.
        let stored = "https://hooks.example.com/a b";
        let again = check_changed_webhook_url(stored, Some(stored), true).await;
        assert_eq!(
            again.map(String::from).as_deref(),
            Ok("https://hooks.example.com/a%20b")
        );
        assert_eq!(
            check_changed_webhook_url("https://hooks.example.com/a  b", Some(stored), true).await,
            Err(Refusal::Blank)
        );
        let kept = check_webhook_url("https://hooks.example.com/a%20b", true).await;
        assert_eq!(
            kept.map(String::from).as_deref(),
            Ok("https://hooks.example.com/a%20b")
        );
    }

    #[tokio::test]
    async fn port_zero_is_refused_whatever_the_host() {
        for allow_private in [false, true] {
            for url in [
                "https://example.com:0/",
                "https://93.184.216.34:0/hook",
                "https://hooks.nowhere.invalid:0/m",
            ] {
                assert_eq!(check(url, allow_private), Err(Refusal::Port), "{url}");
                assert_eq!(
                    check_webhook_url(url, allow_private).await,
                    Err(Refusal::Port),
                    "{url}"
                );
            }
            assert_eq!(check("https://example.com:1/", allow_private), Ok(()));
        }
        assert_eq!(
            Refusal::Port.to_string(),
            "the port 0 is not allowed; give a port from 1 to 65535, or none for the scheme's default"
        );
    }

    #[test]
    fn a_refused_scheme_names_every_allowed_scheme() {
        let refusal = |allow_private| check("ftp://127.0.0.1/x", allow_private).unwrap_err();
        assert_eq!(
            refusal(true).to_string(),
            "the scheme `ftp` is not allowed; the scheme must be http or https"
        );
        assert_eq!(
            refusal(false).to_string(),
            "the scheme `ftp` is not allowed; the scheme must be https"
        );
    }

    #[tokio::test]
    async fn refuses_unsafe_urls_and_accepts_public_literals() {
        for url in [
            "https://127.0.0.1/hook",
            "https://10.1.2.3/hook",
            "https://169.254.169.254/latest",
            "https://[::1]/hook",
            "https://[fd00::1]/hook",
            "https://[64:ff9b:1::a00:1]/",
            "https://[::ffff:0:a00:1]/",
            "https://[2001:2::1]/",
            "https://192.88.99.1/",
            "https://localhost/hook",
            "http://93.184.216.34/hook",
            "ftp://93.184.216.34/",
            "not a url",
        ] {
            assert!(check_webhook_url(url, false).await.is_err(), "{url}");
        }
        assert!(check_webhook_url("https://93.184.216.34/hook", false)
            .await
            .is_ok());
        assert!(check_webhook_url("http://127.0.0.1:9000/hook", true)
            .await
            .is_ok());
        assert!(check_webhook_url("ftp://127.0.0.1/", true).await.is_err());
    }

    fn answer(
        found: std::io::Result<Vec<IpAddr>>,
    ) -> impl FnOnce(String, u16) -> std::future::Ready<std::io::Result<Vec<IpAddr>>> {
        move |_, _| std::future::ready(found)
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter()
            .map(|s| s.parse().unwrap_or_else(|_| panic!("bad ip {s}")))
            .collect()
    }

    #[tokio::test]
    async fn names_resolving_to_a_private_address_are_refused() {
        for found in [
            &["127.0.0.1"][..],
            &["10.0.0.7"],
            &["93.184.216.34", "169.254.169.254"],
            &["::1"],
            &["2606:4700:4700::1111", "fd00::1"],
        ] {
            let checked = check_webhook_url_with(
                "https://hooks.studio.test/m",
                false,
                answer(Ok(ips(found))),
            )
            .await;
            assert!(
                matches!(&checked, Err(Refusal::Resolved { host, .. }) if host == "hooks.studio.test"),
                "{found:?}: {checked:?}"
            );
        }
        let public = check_webhook_url_with(
            "https://hooks.studio.test/m",
            false,
            answer(Ok(ips(&["1.1.1.1"]))),
        )
        .await;
        assert!(public.is_ok(), "{public:?}");
    }

    /// What the installation's resolver answered for a name is never in
    /// the message (it goes to the tenant); an address the studio wrote is.
    #[tokio::test]
    async fn a_refused_name_does_not_say_what_it_resolves_to() {
        for (url, found) in [
            ("https://redis.internal/hook", "10.0.0.5"),
            ("https://Hooks.Studio.Test./m", "fd00::1"),
            ("https://meta.studio.test/m", "169.254.169.254"),
        ] {
            let refusal =
                check_webhook_url_with(url, false, answer(Ok(ips(&["93.184.216.34", found]))))
                    .await
                    .unwrap_err();
            let text = refusal.to_string();
            assert!(!text.contains(found), "{url}: {text}");
            assert!(text.contains("resolves to a non-public address"), "{text}");
            // The address is kept for the operator's log.
            assert!(
                matches!(refusal, Refusal::Resolved { address, .. } if address.to_string() == found),
                "{url}"
            );
        }
        let host = check_webhook_url_with(
            "https://Hooks.Studio.Test./m",
            false,
            answer(Ok(ips(&["10.0.0.5"]))),
        )
        .await
        .unwrap_err();
        assert_eq!(
            host.to_string(),
            "the host `hooks.studio.test` resolves to a non-public address"
        );
        for (url, written) in [
            ("https://10.1.2.3/hook", "10.1.2.3"),
            ("https://[fd00::1]/hook", "fd00::1"),
        ] {
            let text = check_webhook_url(url, false).await.unwrap_err().to_string();
            assert_eq!(
                text,
                format!("the host is a non-public address ({written})")
            );
        }
    }

    #[tokio::test]
    async fn names_that_do_not_resolve_are_accepted() {
        let nxdomain = || {
            answer(Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "Name or service not known",
            )))
        };
        for url in [
            "https://game.example.com/hooks/match",
            "https://hooks.nowhere.invalid/m?token=1",
            "https://hooks.studio.test.:8443/m",
        ] {
            assert!(
                check_webhook_url_with(url, false, nxdomain()).await.is_ok(),
                "{url}"
            );
            // No address at all, as some resolvers answer.
            assert!(
                check_webhook_url_with(url, false, answer(Ok(Vec::new())))
                    .await
                    .is_ok(),
                "{url}"
            );
        }
        // No network: the resolver cannot be reached (EAI_AGAIN).
        let offline = answer(Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "Temporary failure in name resolution",
        )));
        assert!(
            check_webhook_url_with("https://hooks.studio.test/m", false, offline)
                .await
                .is_ok()
        );
        // Names never looked up stay refused whatever DNS says.
        for url in [
            "https://localhost/hook",
            "https://api.localhost/hook",
            "https://intranet/hook",
        ] {
            assert!(
                matches!(
                    check_webhook_url_with(url, false, nxdomain()).await,
                    Err(Refusal::Host(_))
                ),
                "{url}"
            );
        }
        // The real resolver: `.invalid` never resolves (RFC 6761).
        assert!(check_webhook_url("https://hooks.nowhere.invalid/m", false)
            .await
            .is_ok());
    }
}
