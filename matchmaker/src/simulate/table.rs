//! `--format table`: the report, readable.

use super::report::Report;
use std::fmt::Write;

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// Renders `report` as aligned text: the stats first (`wait seconds` over
/// matched players, `wait (all)` with those still waiting censored at
/// `until`), then up to
/// `max_matches` matches, then the players left waiting with their reason.
pub fn render_table(report: &Report, max_matches: usize) -> String {
    let mut out = String::new();
    let s = &report.stats;
    let _ = writeln!(
        out,
        "matches {}   matched players {}   still waiting {}   failed/expired {}   refused arrivals {}",
        s.matches,
        s.matched_players,
        s.still_waiting,
        report.ended.len(),
        report.refused_arrivals
    );
    // Said, not dropped unseen (docs/simulate.md, "Timing").
    if report.not_simulated > 0 {
        let _ = writeln!(
            out,
            "not simulated {}: arriving after the last cycle (until)",
            report.not_simulated
        );
    }
    let _ = writeln!(
        out,
        "{:<16}{:>10}{:>10}{:>10}{:>10}",
        "", "p50", "p90", "p99", "max"
    );
    let w = &s.wait_seconds;
    let _ = writeln!(
        out,
        "{:<16}{:>10}{:>10}{:>10}{:>10}",
        "wait seconds",
        num(w.p50),
        num(w.p90),
        num(w.p99),
        num(w.max)
    );
    let w = &s.wait_seconds_all;
    let _ = writeln!(
        out,
        "{:<16}{:>10}{:>10}{:>10}{:>10}",
        "wait (all)",
        num(w.p50),
        num(w.p90),
        num(w.p99),
        num(w.max)
    );
    let m = &s.mmr_spread;
    let _ = writeln!(
        out,
        "{:<16}{:>10}{:>10}{:>10}{:>10}",
        "mmr spread",
        num(m.p50),
        num(m.p90),
        "",
        num(m.max)
    );
    let t = &s.team_imbalance;
    let _ = writeln!(
        out,
        "{:<16}{:>10}{:>10}{:>10}{:>10}",
        "team imbalance",
        num(t.p50),
        num(t.p90),
        "",
        num(t.max)
    );
    // Role queues: each role's waits and how many it seated.
    for (role, r) in &s.roles {
        let w = &r.wait_seconds;
        let _ = writeln!(
            out,
            "{:<16}{:>10}{:>10}{:>10}{:>10}   {} in {}",
            format!("wait: {role}"),
            num(w.p50),
            num(w.p90),
            num(w.p99),
            num(w.max),
            counted(r.matched_players, "player", "players"),
            counted(r.matches, "match", "matches")
        );
    }
    if let Some(b) = &s.backfill {
        let _ = writeln!(
            out,
            "backfills {}   fills {}   seats filled {} of {}",
            b.backfills, b.fills, b.seats_filled, b.seats_opened
        );
        let f = &b.time_to_fill;
        let _ = writeln!(
            out,
            "{:<16}{:>10}{:>10}{:>10}{:>10}",
            "time to fill",
            num(f.p50),
            num(f.p90),
            num(f.p99),
            num(f.max)
        );
    }
    if let Some(a) = &s.acceptance {
        let share = a
            .accepted_share
            .map_or("-".into(), |share| format!("{:.1} %", share * 100.0));
        let _ = writeln!(
            out,
            "proposals {}   made {}   accepted share {}   declines {}   timeouts {}   requeued {}   cooldown refusals {}",
            a.proposals, a.made, share, a.declines, a.timeouts, a.requeued, a.cooldown_refusals
        );
    }
    // The region column only when the mode has regions.
    let regional = report.matches.iter().any(|m| m.region.is_some());
    if !report.matches.is_empty() {
        let _ = writeln!(
            out,
            "\n{:>8}  {:>8}  {:>9}  {}teams",
            "at",
            "spread",
            "imbalance",
            if regional {
                format!("{:<12}", "region")
            } else {
                String::new()
            }
        );
        for m in report.matches.iter().take(max_matches) {
            let teams: Vec<String> = m
                .teams
                .iter()
                .map(|t| {
                    let seats: Vec<&str> =
                        t.iter().map(|p| p.as_deref().unwrap_or("bot")).collect();
                    seats.join(",")
                })
                .collect();
            let region = if regional {
                format!("{:<12}", m.region.as_deref().unwrap_or("-"))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{:>8.1}  {:>8}  {:>9}  {}{}",
                m.at,
                num(m.mmr_spread),
                num(m.team_imbalance),
                region,
                teams.join(" vs ")
            );
        }
        if report.matches.len() > max_matches {
            let _ = writeln!(
                out,
                "… {} more matches (use --format json for all)",
                report.matches.len() - max_matches
            );
        }
    }
    if !report.unmatched_reasons.is_empty() {
        let _ = writeln!(out, "\nwaiting at the end, and why:");
        for (player, reason) in &report.unmatched_reasons {
            let detail = serde_json::to_string(reason).unwrap_or_default();
            let _ = writeln!(out, "  {player:<20} {detail}");
        }
    }
    out
}

/// `n` and the noun for it: "1 match", "2 matches".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
