//! Which addresses a webhook may be delivered to (docs/game-modes.md, `INVALID_WEBHOOK_URL`,
//! "again at every delivery"; docs/webhooks.md, "Which URLs are accepted").
//!
//! The API checks a webhook URL when a game mode is configured; a host can
//! later resolve somewhere else (DNS rebinding), so the worker checks again at
//! every delivery, on the very addresses it will connect to. This classifier is
//! the only one: both checks ([`crate::ssrf`]) use it.
//!
//! The blocks refused follow the IANA special-purpose address registries
//! (IPv4 and IPv6): every block there that is not globally reachable is
//! refused, and a few that are but never hold a webhook receiver are
//! refused whole, which is simpler to check.
//!
//! IPv4 (`V4_REFUSED`): "this network" (0/8), private (RFC 1918),
//! carrier-grade NAT (100.64/10), loopback, link-local (169.254/16 with
//! the cloud metadata address), IETF protocol assignments (192.0.0/24,
//! whole), documentation, the deprecated 6to4 relay anycast
//! (192.88.99/24), benchmarking (198.18/15), multicast, and reserved
//! (240/4, with broadcast).
//!
//! IPv6: an address that carries an IPv4 one (`embedded_v4`: mapped
//! `::ffff:a.b.c.d`, compatible `::a.b.c.d`, translated
//! `::ffff:0:a.b.c.d`, NAT64 well-known `64:ff9b::/96`, 6to4 `2002::/16`)
//! is judged by that IPv4. Any other address outside global unicast
//! `2000::/3` is refused: unspecified, loopback, NAT64 local-use
//! (`64:ff9b:1::/48`, whole whatever it carries), discard-only and dummy
//! (`100::/64`, `100:0:0:1::/64`), SRv6 (`5f00::/16`), ULA (`fc00::/7`),
//! link-local, site-local, multicast and the rest the IETF reserves.
//! Inside `2000::/3` (`V6_REFUSED`): the IETF protocol assignments
//! `2001::/23` (whole: Teredo, benchmarking, ORCHID, a few anycast
//! services) and documentation (`2001:db8::/32`, `3fff::/20`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether a webhook must never be sent to `ip` (see the module doc).
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_forbidden(v4),
        IpAddr::V6(v6) => v6_forbidden(v6),
    }
}

/// The refused IPv4 blocks: first address and prefix length.
const V4_REFUSED: [(Ipv4Addr, u32); 15] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),       // "this network" (RFC 791)
    (Ipv4Addr::new(10, 0, 0, 0), 8),      // private (RFC 1918)
    (Ipv4Addr::new(100, 64, 0, 0), 10),   // shared address space, CGNAT (RFC 6598)
    (Ipv4Addr::new(127, 0, 0, 0), 8),     // loopback (RFC 1122)
    (Ipv4Addr::new(169, 254, 0, 0), 16),  // link-local, cloud metadata (RFC 3927)
    (Ipv4Addr::new(172, 16, 0, 0), 12),   // private (RFC 1918)
    (Ipv4Addr::new(192, 0, 0, 0), 24),    // IETF protocol assignments (RFC 6890)
    (Ipv4Addr::new(192, 0, 2, 0), 24),    // documentation TEST-NET-1 (RFC 5737)
    (Ipv4Addr::new(192, 88, 99, 0), 24),  // deprecated 6to4 relay anycast (RFC 7526)
    (Ipv4Addr::new(192, 168, 0, 0), 16),  // private (RFC 1918)
    (Ipv4Addr::new(198, 18, 0, 0), 15),   // benchmarking (RFC 2544)
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation TEST-NET-2 (RFC 5737)
    (Ipv4Addr::new(203, 0, 113, 0), 24),  // documentation TEST-NET-3 (RFC 5737)
    (Ipv4Addr::new(224, 0, 0, 0), 4),     // multicast (RFC 5771)
    (Ipv4Addr::new(240, 0, 0, 0), 4),     // reserved, broadcast (RFC 1112, RFC 919)
];

/// The refused IPv6 blocks inside global unicast `2000::/3` (everything
/// outside it is refused but the IPv4 embeddings): first address and
/// prefix length.
const V6_REFUSED: [(Ipv6Addr, u32); 3] = [
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23), // IETF protocol assignments (RFC 2928)
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation (RFC 3849)
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20), // documentation (RFC 9637)
];

/// Global unicast `2000::/3`, the only IPv6 space allocated for the
/// public Internet.
const V6_GLOBAL_UNICAST: (Ipv6Addr, u32) = (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

fn in_v4((net, len): (Ipv4Addr, u32), ip: Ipv4Addr) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net) & mask
}

fn in_v6((net, len): (Ipv6Addr, u32), ip: Ipv6Addr) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

fn v4_forbidden(ip: Ipv4Addr) -> bool {
    V4_REFUSED.iter().any(|&block| in_v4(block, ip))
}

/// The IPv4 address `ip` carries, in the forms where the IPv4 one is what
/// is reached: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`
/// (deprecated; `::` and `::1` read as 0.0.0.0 and 0.0.0.1, refused
/// alike), IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), NAT64
/// well-known `64:ff9b::/96` (RFC 6052) and 6to4 `2002:aabb:ccdd::/48`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let [a, b, c, d, e, f, g, h] = ip.segments();
    let v4 = |hi: u16, lo: u16| Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    match (a, b, c, d, e, f) {
        (0, 0, 0, 0, 0, 0xffff) | (0, 0, 0, 0, 0xffff, 0) | (0, 0, 0, 0, 0, 0) => v4(g, h),
        (0x64, 0xff9b, 0, 0, 0, 0) => v4(g, h),
        (0x2002, ..) => v4(b, c),
        _ => None,
    }
}

fn v6_forbidden(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return v4_forbidden(v4);
    }
    !in_v6(V6_GLOBAL_UNICAST, ip) || V6_REFUSED.iter().any(|&block| in_v6(block, ip))
}

#[cfg(test)]
mod tests {
    use super::is_forbidden;

    /// The addresses of `table` that `is_forbidden` does not judge as
    /// `refused`: every misjudged one is named at once.
    fn misjudged(table: &[&'static str], refused: bool) -> Vec<&'static str> {
        table
            .iter()
            .copied()
            .filter(|ip| is_forbidden(ip.parse().unwrap()) != refused)
            .collect()
    }

    #[test]
    fn refuses_internal_addresses() {
        let wrong = misjudged(
            &[
                "0.0.0.0",
                "0.1.2.3",
                "127.0.0.1",
                "127.255.0.9",
                "10.0.0.1",
                "172.16.0.1",
                "172.31.255.255",
                "192.168.0.1",
                "169.254.169.254",
                "100.64.0.1",
                "100.127.255.254",
                "224.0.0.251",
                "239.255.255.250",
                "255.255.255.255",
                "240.0.0.1",
                "192.0.0.8",
                "198.18.0.1",
                "::",
                "::1",
                "fd00::1",
                "fc12::1",
                "fe80::1",
                "fec0::1",
                "ff02::1",
                "::ffff:127.0.0.1",
                "::ffff:10.0.0.1",
                "::ffff:169.254.169.254",
                "::10.0.0.1",
                "64:ff9b::a9fe:a9fe",
                "2002:a00:1::1",
                "2001:db8::1",
                "10.1.2.3",
                "192.168.1.1",
                "100.127.255.255",
                "224.0.0.1",
                "fc00::1",
                "64:ff9b::a00:1",
                "2002:0a00:0001::1",
            ],
            true,
        );
        assert!(wrong.is_empty(), "must be refused: {wrong:?}");
    }

    /// Every block of the IANA special-purpose registries (IPv4 and IPv6)
    /// that is not globally reachable, and an IPv4 one carried in each
    /// IPv6 translation form (docs/webhooks.md, "Which URLs are accepted").
    #[test]
    fn refuses_every_special_purpose_block_and_embedding() {
        let wrong = misjudged(
            &[
                // IPv4: deprecated 6to4 relay anycast 192.88.99.0/24 (RFC 7526),
                // with the 6a44 relay 192.88.99.2.
                "192.88.99.1",
                "192.88.99.2",
                "192.88.99.255",
                // IPv4: DS-Lite and the NAT64/DNS64 discovery addresses.
                "192.0.0.1",
                "192.0.0.170",
                "192.0.2.1",
                "198.19.255.255",
                "198.51.100.1",
                "203.0.113.1",
                // IPv6: IPv4-translated ::ffff:0:0/96 (RFC 2765) with a
                // private, a loopback and a metadata IPv4 inside.
                "::ffff:0:a00:1",
                "::ffff:0:7f00:1",
                "::ffff:0:a9fe:a9fe",
                "::ffff:0:c058:6301",
                // IPv6: NAT64 local-use 64:ff9b:1::/48 (RFC 8215), refused
                // whole whatever it carries.
                "64:ff9b:1::a00:1",
                "64:ff9b:1::808:808",
                "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
                // IPv4 6to4 relay anycast in every embedding.
                "::ffff:192.88.99.1",
                "::192.88.99.1",
                "64:ff9b::c058:6301",
                "2002:c058:6301::1",
                // IPv6: the IETF protocol assignments 2001::/23, refused
                // whole: benchmarking 2001:2::/48 (RFC 5180), Teredo
                // 2001::/32, ORCHID 2001:10::/28, the anycast services.
                "2001:2::1",
                "2001:2:0:ffff::1",
                "2001::1",
                "2001:0:4136:e378:8000:63bf:3fff:fdd2",
                "2001:10::1",
                "2001:1::1",
                "2001:1ff:ffff::1",
                // IPv6: discard-only 100::/64, dummy prefix 100:0:0:1::/64
                // (RFC 9780), documentation 3fff::/20 (RFC 9637), SRv6
                // SIDs 5f00::/16 (RFC 9602).
                "100::1",
                "100:0:0:1::1",
                "3fff::1",
                "3fff:fff:ffff::1",
                "5f00::1",
                // IPv6 outside global unicast 2000::/3: reserved by the IETF.
                "200::1",
                "4000::1",
                "e000::1",
                "::2:0:0:0:1",
            ],
            true,
        );
        assert!(wrong.is_empty(), "must be refused: {wrong:?}");
    }

    #[test]
    fn allows_public_addresses() {
        let wrong = misjudged(
            &[
                "1.1.1.1",
                "8.8.8.8",
                "93.184.216.34",
                "100.63.255.255",
                "100.128.0.1",
                "172.32.0.1",
                "192.169.0.1",
                "2606:4700:4700::1111",
                "2a00:1450:4001::200e",
                "::ffff:93.184.216.34",
                "64:ff9b::808:808",
                "2002:808:808::1",
                "100.128.0.0",
                // Next to the refused blocks, and inside none of them.
                "192.88.98.255",
                "192.88.100.1",
                "192.31.196.1",
                "192.175.48.1",
                "198.20.0.1",
                "::ffff:0:808:808",
                "2001:200::1",
                "2001:4860:4860::8888",
                "2620:4f:8000::1",
                "3fff:1000::1",
                "2c0f:fb50::1",
            ],
            false,
        );
        assert!(wrong.is_empty(), "must be allowed: {wrong:?}");
    }
}
