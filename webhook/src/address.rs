//! Which addresses a webhook may be delivered to (docs/game-modes.md, `INVALID_WEBHOOK_URL`,
//! "again at every delivery").
//!
//! The API checks a webhook URL when a game mode is configured; a host can
//! later resolve somewhere else (DNS rebinding), so the worker checks again at
//! every delivery, on the very addresses it will connect to. This classifier is
//! the only one: both checks ([`crate::ssrf`]) use it.
//!
//! Refused: unspecified, "this network" (0/8), loopback, RFC 1918 private,
//! link-local (169.254/16 with the cloud metadata address, fe80::/10), CGNAT
//! (100.64/10), multicast, broadcast and reserved (240/4), IETF protocol
//! assignments (192.0.0/24), benchmarking (198.18/15), documentation ranges,
//! IPv6 ULA (fc00::/7), deprecated site-local (fec0::/10), and an IPv4 address
//! carried inside an IPv6 one (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) when that IPv4 is refused.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether a webhook must never be sent to `ip` (see the module doc).
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_forbidden(v4),
        IpAddr::V6(v6) => v6_forbidden(v6),
    }
}

fn v4_forbidden(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    let in_net = |net: [u8; 4], prefix: u32| -> bool {
        let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
        u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
    };
    o[0] == 0
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || o[0] >= 240
        || in_net([100, 64, 0, 0], 10)
        || in_net([192, 0, 0, 0], 24)
        || in_net([192, 0, 2, 0], 24)
        || in_net([198, 18, 0, 0], 15)
        || in_net([198, 51, 100, 0], 24)
        || in_net([203, 0, 113, 0], 24)
}

/// The IPv4 address in the last 32 bits of `ip`.
fn low_v4(ip: Ipv6Addr) -> Ipv4Addr {
    let b = ip.octets();
    Ipv4Addr::new(b[12], b[13], b[14], b[15])
}

fn v6_forbidden(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if ip.is_unspecified() || ip.is_loopback() || ip.is_multicast() {
        return true;
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_forbidden(v4);
    }
    if s[..6] == [0; 6] {
        // IPv4-compatible `::a.b.c.d` (deprecated).
        return v4_forbidden(low_v4(ip));
    }
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6] == [0; 4] {
        // NAT64 well-known prefix.
        return v4_forbidden(low_v4(ip));
    }
    if s[0] == 0x2002 {
        // 6to4: the IPv4 address follows the prefix.
        let b = ip.octets();
        return v4_forbidden(Ipv4Addr::new(b[2], b[3], b[4], b[5]));
    }
    (s[0] & 0xfe00) == 0xfc00 // ULA fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x2001 && s[1] == 0x0000) // Teredo
        || (s[0] == 0x0100 && s[1..4] == [0; 3]) // discard-only 100::/64
}

#[cfg(test)]
mod tests {
    use super::is_forbidden;

    fn forbidden(s: &str) -> bool {
        is_forbidden(s.parse().unwrap())
    }

    #[test]
    fn refuses_internal_addresses() {
        for ip in [
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
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
    }

    #[test]
    fn allows_public_addresses() {
        for ip in [
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
        ] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
    }
}
