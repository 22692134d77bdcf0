//! The webhook URL rules of `ssrf.rs` (docs/webhooks.md).

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
        let checked =
            check_webhook_url_with("https://hooks.studio.test/m", false, answer(Ok(ips(found))))
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
