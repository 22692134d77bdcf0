//! Two configs on the same arrivals and seed (`simulate --compare`, a
//! scenario's `compare`, a replay of recorded traffic): both reports and
//! the headline figures side by side.

use super::engine::{run, run_bounded, Stopped};
use super::report::Report;
use super::scenario::Scenario;
use crate::config::GameModeConfig;
use serde::Serialize;
use std::collections::BTreeMap;

/// The headline figures compared, in table order. Each is a number (or
/// `null` when it has no value, e.g. a wait percentile without players):
///
/// - `matches`, `matchedPlayers`, `stillWaiting`;
/// - `matchedShare`: matched players over every search that did not end
///   by a cancel (matched, still waiting, failed or expired);
/// - `waitP50`, `waitP90`, `waitP99`: seconds waited by every player,
///   those still waiting counted until `until`;
/// - `matchedWaitP50`, `matchedWaitP90`: seconds waited by matched players;
/// - `mmrSpreadP50`, `mmrSpreadP90`, `teamImbalanceP50`,
///   `teamImbalanceP90`: MMR points per match;
/// - `relaxedMatches` (a shape smaller than the base one, no bots) and
///   `botMatches`.
pub const FIGURES: [&str; 16] = [
    "matches",
    "matchedPlayers",
    "matchedShare",
    "stillWaiting",
    "waitP50",
    "waitP90",
    "waitP99",
    "matchedWaitP50",
    "matchedWaitP90",
    "mmrSpreadP50",
    "mmrSpreadP90",
    "teamImbalanceP50",
    "teamImbalanceP90",
    "relaxedMatches",
    "botMatches",
    "ended",
];

/// Whether a larger value of a figure is better (`matches`,
/// `matchedPlayers`, `matchedShare`); for every other figure smaller is
/// better. Used to tell a regression from an improvement.
pub fn higher_is_better(figure: &str) -> bool {
    matches!(figure, "matches" | "matchedPlayers" | "matchedShare")
}

/// `a` and `b`'s reports and, per figure of [`FIGURES`], `[a, b]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The report of the first config (the scenario's `gameMode`).
    pub a: Report,
    /// The report of the second config.
    pub b: Report,
    /// `{"<figure>": [a, b]}`, written with [`written_diff`].
    #[serde(serialize_with = "serialize_diff")]
    pub diff: BTreeMap<&'static str, [Option<f64>; 2]>,
    /// The guard's verdict on `b`, when a guard was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guard: Option<super::guard::GuardVerdict>,
}

/// Whether `figure` is in seconds (the waits).
fn in_seconds(figure: &str) -> bool {
    figure.starts_with("wait") || figure.starts_with("matchedWait")
}

/// `diff` as it is written (by `simulate --compare`, a scenario's
/// `compare` and a replay alike): its seconds (the wait figures) to the
/// millisecond, as the reports write theirs (docs/simulate.md).
pub fn written_diff<'f>(
    diff: &BTreeMap<&'f str, [Option<f64>; 2]>,
) -> BTreeMap<&'f str, [Option<f64>; 2]> {
    diff.iter()
        .map(|(figure, pair)| {
            let written = match in_seconds(figure) {
                true => pair.map(|v| v.map(crate::timestamp::round_millis)),
                false => *pair,
            };
            (*figure, written)
        })
        .collect()
}

fn serialize_diff<S: serde::Serializer>(
    diff: &BTreeMap<&'static str, [Option<f64>; 2]>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&written_diff(diff), serializer)
}

/// Runs `scenario` as it is and again with `other` as its game mode (same
/// arrivals, seed and `until`), and compares them. Deterministic.
pub fn compare(scenario: &Scenario, other: &GameModeConfig) -> Comparison {
    let a = run(scenario);
    let mut second = scenario.clone();
    second.game_mode = other.clone();
    second.compare = None;
    let b = run(&second);
    comparison(scenario, other, a, b)
}

/// [`compare`], asking `keep_going` before each cycle of either run (see
/// [`super::run_bounded`]): a replay in the server bounds its cost with it.
///
/// # Errors
/// [`Stopped`] at the first `false`.
pub fn compare_bounded(
    scenario: &Scenario,
    other: &GameModeConfig,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Comparison, Stopped> {
    let a = run_bounded(scenario, keep_going)?;
    let mut second = scenario.clone();
    second.game_mode = other.clone();
    second.compare = None;
    let b = run_bounded(&second, keep_going)?;
    Ok(comparison(scenario, other, a, b))
}

fn comparison(scenario: &Scenario, other: &GameModeConfig, a: Report, b: Report) -> Comparison {
    let fa = figures(&scenario.game_mode, &a);
    let fb = figures(other, &b);
    let diff = FIGURES
        .iter()
        .map(|f| {
            (
                *f,
                [fa.get(f).copied().flatten(), fb.get(f).copied().flatten()],
            )
        })
        .collect();
    Comparison {
        a,
        b,
        diff,
        guard: None,
    }
}

/// The figures of [`FIGURES`] of one `report` made under `config`.
pub fn figures(config: &GameModeConfig, report: &Report) -> BTreeMap<&'static str, Option<f64>> {
    let s = &report.stats;
    let base = config.match_size();
    let bots = report
        .matches
        .iter()
        .filter(|m| m.players.iter().any(|p| p.bot))
        .count();
    let relaxed = report
        .matches
        .iter()
        .filter(|m| !m.players.iter().any(|p| p.bot) && m.match_shape.iter().sum::<u32>() < base)
        .count();
    let searched = s.matched_players + s.still_waiting + report.ended.len();
    let count = |n: usize| Some(n as f64);
    BTreeMap::from([
        ("matches", count(s.matches)),
        ("matchedPlayers", count(s.matched_players)),
        (
            "matchedShare",
            (searched > 0).then(|| s.matched_players as f64 / searched as f64),
        ),
        ("stillWaiting", count(s.still_waiting)),
        ("waitP50", s.wait_seconds_all.p50),
        ("waitP90", s.wait_seconds_all.p90),
        ("waitP99", s.wait_seconds_all.p99),
        ("matchedWaitP50", s.wait_seconds.p50),
        ("matchedWaitP90", s.wait_seconds.p90),
        ("mmrSpreadP50", s.mmr_spread.p50),
        ("mmrSpreadP90", s.mmr_spread.p90),
        ("teamImbalanceP50", s.team_imbalance.p50),
        ("teamImbalanceP90", s.team_imbalance.p90),
        ("relaxedMatches", count(relaxed)),
        ("botMatches", count(bots)),
        ("ended", count(report.ended.len())),
    ])
}

/// The comparison as one readable table: figure, `a`, `b`, and `b`'s
/// change relative to `a`.
pub fn render_compare_table(c: &Comparison) -> String {
    let counts = [
        "matches",
        "matchedPlayers",
        "stillWaiting",
        "relaxedMatches",
        "botMatches",
        "ended",
    ];
    let mut out = format!("{:<18} {:>12} {:>12} {:>9}\n", "figure", "a", "b", "change");
    for figure in FIGURES {
        let [a, b] = c.diff.get(figure).copied().unwrap_or([None, None]);
        let f = |v: Option<f64>| match v {
            None => "-".to_string(),
            Some(v) if counts.contains(&figure) => format!("{v:.0}"),
            Some(v) => format!("{v:.2}"),
        };
        let change = match (a, b) {
            (Some(a), Some(b)) if a == b => "=".to_string(),
            (Some(a), Some(b)) if a != 0.0 => percent((b - a) / a.abs()),
            _ => "-".to_string(),
        };
        out.push_str(&format!(
            "{:<18} {:>12} {:>12} {:>9}\n",
            figure,
            f(a),
            f(b),
            change
        ));
    }
    if let Some(guard) = &c.guard {
        let verdict = if guard.passed {
            "passed"
        } else {
            "refused: CONFIG_REGRESSION"
        };
        out.push_str(&format!(
            "\nguard (tolerance {:.0}%): {verdict}\n",
            guard.tolerance * 100.0
        ));
        for g in &guard.figures {
            let by = match g.worsened_by {
                None => "-".to_string(),
                Some(w) if w > 0.0 => format!("worsened by {}", percent(w).trim_start_matches('+')),
                Some(w) if w < 0.0 => {
                    format!("improved by {}", percent(-w).trim_start_matches('+'))
                }
                Some(_) => "unchanged".to_string(),
            };
            let mark = if g.regressed { "regressed" } else { "ok" };
            out.push_str(&format!("  {:<16} {by:<20} {mark}\n", g.figure));
        }
    }
    out
}

/// A relative change as a signed whole percentage; a change that rounds
/// to nothing reads `~0%` (never `-0%`).
fn percent(change: f64) -> String {
    let rounded = (change * 100.0).round();
    if rounded == 0.0 {
        "~0%".to_string()
    } else {
        format!("{rounded:+.0}%")
    }
}
