//! Webhook URL safety (SPEC 3, `INVALID_WEBHOOK_URL`).
//!
//! A webhook must not let a tenant make matchplane call inside its own
//! network: loopback, private, link-local (cloud metadata at
//! 169.254.169.254), CGNAT, multicast, unspecified, broadcast, reserved and
//! IPv6 ULA/link-local addresses are refused, also when written as IPv4
//! inside an IPv6 address (`::ffff:10.0.0.1`, NAT64, 6to4).
//!
//! [`is_forbidden`] is the pure classification, shared with the worker
//! (`worker/src/webhook/address.rs`), which applies it again at every
//! delivery on the address it actually connects to, so DNS rebinding cannot
//! get past a check made at configuration time.
//!
//! A name that does not resolve at configuration time (NXDOMAIN, no DNS
//! server, no network, a lookup slower than [`RESOLVE_TIMEOUT`]) is
//! accepted: a mode is often configured before its endpoint's DNS exists,
//! or on a machine without network. Its deliveries fail (and are retried)
//! until the name resolves, and the mode's webhook shows as failing; the
//! check at delivery refuses it if it then resolves to a private address.

use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;
use url::{Host, Url};

/// How long resolving a webhook host may take at configuration time.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a webhook URL was refused; the message is safe to show the tenant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeUrl {
    /// Not a URL at all.
    #[error("not a valid absolute URL")]
    Malformed,
    /// Not `https` (or `http` while private webhooks are allowed).
    #[error("the scheme must be https")]
    Scheme,
    /// No host, or a host such as `localhost`.
    #[error("the host `{0}` is not a public host")]
    Host(String),
    /// The host resolves to a non-public address.
    #[error("the host resolves to a non-public address ({0})")]
    Address(IpAddr),
}

/// Whether a webhook must never be sent to `ip`: the worker's classifier,
/// so configuration time and delivery time apply one policy.
pub use matchplane_worker::webhook::address::is_forbidden;

/// Checks a webhook URL (SPEC 3): `https` with a public IP literal, or a
/// host name that resolves only to public addresses, or does not resolve
/// at all yet (see the module doc). With `allow_private` (operator setting
/// `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS=true`) any `http`/`https` URL passes.
///
/// # Errors
/// [`UnsafeUrl`] saying why the URL is refused.
pub async fn check_webhook_url(raw: &str, allow_private: bool) -> Result<Url, UnsafeUrl> {
    check_webhook_url_with(raw, allow_private, system_resolve).await
}

/// The system resolver: every address of `host` (port `port`).
async fn system_resolve(host: String, port: u16) -> std::io::Result<Vec<IpAddr>> {
    Ok(tokio::net::lookup_host((host.as_str(), port))
        .await?
        .map(|addr| addr.ip())
        .collect())
}

/// [`check_webhook_url`] resolving names with `resolve` (the host in lower
/// case without a trailing dot, and the port), which tests replace.
///
/// # Errors
/// [`UnsafeUrl`] saying why the URL is refused.
pub async fn check_webhook_url_with<F, Fut>(
    raw: &str,
    allow_private: bool,
    resolve: F,
) -> Result<Url, UnsafeUrl>
where
    F: FnOnce(String, u16) -> Fut,
    Fut: Future<Output = std::io::Result<Vec<IpAddr>>>,
{
    let url = Url::parse(raw).map_err(|_| UnsafeUrl::Malformed)?;
    let scheme_ok = url.scheme() == "https" || (allow_private && url.scheme() == "http");
    if !scheme_ok {
        return Err(UnsafeUrl::Scheme);
    }
    let host = url.host().ok_or_else(|| UnsafeUrl::Host(String::new()))?;
    if allow_private {
        return Ok(url);
    }
    let port = url.port_or_known_default().unwrap_or(443);
    let addresses: Vec<IpAddr> = match host {
        Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
        Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
        Host::Domain(domain) => {
            let lower = domain.trim_end_matches('.').to_ascii_lowercase();
            if lower == "localhost" || lower.ends_with(".localhost") || !lower.contains('.') {
                return Err(UnsafeUrl::Host(domain.to_owned()));
            }
            match tokio::time::timeout(RESOLVE_TIMEOUT, resolve(lower, port)).await {
                Ok(Ok(found)) => found,
                // Not resolvable now: accepted, checked again at delivery.
                Ok(Err(_)) | Err(_) => Vec::new(),
            }
        }
    };
    match addresses.into_iter().find(|ip| is_forbidden(*ip)) {
        Some(ip) => Err(UnsafeUrl::Address(ip)),
        None => Ok(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(s: &str) -> bool {
        is_forbidden(s.parse().unwrap_or_else(|_| panic!("bad ip {s}")))
    }

    #[test]
    fn classifies_private_and_public_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:0a00:0001::1",
            "::10.0.0.1",
        ] {
            assert!(forbidden(ip), "{ip} should be refused");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.0",
            "172.32.0.1",
            "2606:4700:4700::1111",
            "::ffff:93.184.216.34",
        ] {
            assert!(!forbidden(ip), "{ip} should be allowed");
        }
    }

    #[tokio::test]
    async fn refuses_unsafe_urls_and_accepts_public_literals() {
        for url in [
            "https://127.0.0.1/hook",
            "https://10.1.2.3/hook",
            "https://169.254.169.254/latest",
            "https://[::1]/hook",
            "https://[fd00::1]/hook",
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
                matches!(checked, Err(UnsafeUrl::Address(_))),
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
                    Err(UnsafeUrl::Host(_))
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
