//! Two configs on the same arrivals and seed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{compare, render_compare_table, Scenario};
use serde_json::json;

fn scenario(compare: Option<serde_json::Value>) -> serde_json::Value {
    let arrivals: Vec<_> = (0..40)
        .map(|i| json!({"at": f64::from(i) * 0.5, "playerId": format!("p{i}"), "mmr": 1000 + (i * 37) % 600}))
        .collect();
    let mut s = json!({
        "gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
            "ticketTtlSeconds": 600},
        "seed": 3, "until": 60, "arrivals": arrivals
    });
    if let Some(c) = compare {
        s["compare"] = c;
    }
    s
}

fn tight() -> serde_json::Value {
    json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 0.5, "expansionMultiplier": 1.2},
        "ticketTtlSeconds": 600})
}

#[test]
fn both_configs_run_on_the_same_arrivals_and_the_diff_shows_the_cost() {
    let s = Scenario::parse(&scenario(Some(tight())).to_string()).unwrap();
    let other = s.compare.clone().unwrap();
    let c = compare(&s, &other);
    // `a` is exactly the scenario run alone.
    let alone = Scenario::parse(&scenario(None).to_string()).unwrap();
    assert_eq!(c.a, matchplane_matchmaker::simulate::run(&alone));
    let [wa, wb] = c.diff["waitP90"];
    assert!(wb.unwrap() > wa.unwrap(), "{:?}", c.diff);
    let [sa, sb] = c.diff["mmrSpreadP90"];
    assert!(sb.unwrap() < sa.unwrap(), "{:?}", c.diff);
    assert_eq!(
        c.diff["matchedPlayers"][0],
        Some(c.a.stats.matched_players as f64)
    );
    // Deterministic, and the JSON is {a, b, diff}.
    let again = compare(&s, &other);
    assert_eq!(c, again);
    let v = serde_json::to_value(&c).unwrap();
    assert!(v["a"]["stats"].is_object() && v["b"]["matches"].is_array());
    assert_eq!(
        v["diff"]["waitP90"][1],
        json!(wb.map(matchplane_matchmaker::timestamp::round_millis))
    );
    let table = render_compare_table(&c);
    assert!(table.lines().any(|l| l.starts_with("waitP90")), "{table}");
}

/// The diff's seconds are written to the millisecond, as the reports'
/// (docs/simulate.md): arrivals at tenths of a second wait 0.7999… in
/// binary floating point.
#[test]
fn the_diffs_seconds_are_written_to_the_millisecond() {
    let mut s = scenario(Some(tight()));
    s["arrivals"] = (0..40)
        .map(|i| json!({"at": f64::from(i) * 0.1, "playerId": format!("p{i}"), "mmr": 1000 + (i * 37) % 600}))
        .collect();
    let s = Scenario::parse(&s.to_string()).unwrap();
    let c = compare(&s, &s.compare.clone().unwrap());
    let v = serde_json::to_value(&c).unwrap();
    let mut waits = 0;
    for (figure, pair) in v["diff"].as_object().unwrap() {
        for value in pair.as_array().unwrap().iter().filter_map(|v| v.as_f64()) {
            if figure.contains("ait") {
                waits += 1;
                let millis = value * 1000.0;
                assert_eq!(value, millis.round() / 1000.0, "{figure}: {value}");
            }
        }
    }
    assert!(waits > 0, "{v}");
    // The replay writes its diff with the same function.
    let written = matchplane_matchmaker::simulate::written_diff(&c.diff);
    assert_eq!(v["diff"], json!(written));
}

#[test]
fn an_invalid_compare_is_refused_like_the_game_mode() {
    let mut bad = tight();
    bad["matchShape"] = json!([]);
    let err = Scenario::parse(&scenario(Some(bad)).to_string()).unwrap_err();
    assert!(
        err.0.iter().any(|f| f.field.starts_with("compare.")),
        "{err}"
    );
}

#[test]
fn the_guard_refuses_a_figure_worsened_past_the_tolerance() {
    use matchplane_matchmaker::simulate::{check_guard, parse_guard};
    let s = Scenario::parse(&scenario(Some(tight())).to_string()).unwrap();
    let c = compare(&s, s.compare.as_ref().unwrap());
    let guard = parse_guard("waitP90,mmrSpreadP90", "guard").unwrap();
    let v = check_guard(&c, &guard, 0.1);
    assert!(!v.passed, "{v:?}");
    assert_eq!(v.code, Some("CONFIG_REGRESSION"));
    assert!(v.figures[0].regressed, "the wait worsened");
    assert!(!v.figures[1].regressed, "the spread improved");
    assert!(v.figures[1].worsened_by.unwrap() < 0.0);
    // The table says which way each guarded figure moved.
    let shown = matchplane_matchmaker::simulate::Comparison {
        guard: Some(v.clone()),
        ..c.clone()
    };
    let table = render_compare_table(&shown);
    let line = |figure: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with(figure) && l.starts_with("  "))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("waitP90").contains("worsened by "), "{table}");
    assert!(line("waitP90").ends_with("regressed"), "{table}");
    assert!(line("mmrSpreadP90").contains("improved by "), "{table}");
    assert!(!line("mmrSpreadP90").contains('-'), "{table}");
    assert!(!table.contains("-0%"), "{table}");
    // The same config against itself passes, and a wide tolerance too.
    let same = compare(&s, &s.game_mode);
    assert!(check_guard(&same, &guard, 0.0).passed);
    let worsened = v.figures[0].worsened_by.unwrap();
    assert!(check_guard(&c, &guard, worsened + 0.01).passed);
    // Unknown figures are named.
    let err = parse_guard("waitP90,speed", "guard").unwrap_err();
    assert!(err.message.contains("speed"), "{err:?}");
    assert!(parse_guard("", "guard").is_err());
}

/// A shorter time to live turns long waits into expiries: the players it
/// strands count as waiting to the run's end in `waitP90`, so the guard on
/// `waitP90` refuses it rather than reading it as 96 % faster.
#[test]
fn a_config_that_lets_players_expire_does_not_look_faster() {
    let mut arrivals: Vec<serde_json::Value> = (0..20)
        .map(|i| json!({"at": f64::from(i / 2) * 1.0, "playerId": format!("p{i}"), "mmr": 1500}))
        .collect();
    for k in 0..3 {
        let base = 1800 + k * 500;
        arrivals.push(json!({"at": 0.0, "playerId": format!("slow{k}a"), "mmr": base}));
        arrivals.push(json!({"at": 0.0, "playerId": format!("slow{k}b"), "mmr": base + 200}));
    }
    let mode = |ttl: u32| {
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 2, "expansionMultiplier": 2},
            "ticketTtlSeconds": ttl})
    };
    let s = json!({"gameMode": mode(30), "compare": mode(10), "seed": 1, "until": 60, "arrivals": arrivals});
    let s = Scenario::parse(&s.to_string()).unwrap();
    let c = compare(&s, &s.compare.clone().unwrap());
    assert!(c.b.ended.len() > c.a.ended.len(), "{:?}", c.diff);
    let [wa, wb] = c.diff["waitP90"];
    assert!(wb.unwrap() >= wa.unwrap(), "{:?}", c.diff);
    let verdict = matchplane_matchmaker::simulate::check_guard(&c, &["waitP90"], 0.1);
    assert!(!verdict.passed, "{verdict:?}");
}

/// A mode narrowed since its traffic was recorded: MMRs from 1000, no
/// parties.
fn narrowed() -> serde_json::Value {
    json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 1000, "maxMmr": 3000, "baseTolerance": 50, "expansionMultiplier": 2},
        "parties": {"allowParties": false},
        "ticketTtlSeconds": 600})
}

/// The traffic recorded under the wider mode: a solo below the new
/// `minMmr`, a duo, and two solos the narrowed mode still takes.
const RECORDED: &str = "at,playerId,mmr,pingMs,partyId,partyMembers\n\
    0.5,low,500,,,\n\
    1.0,d1,1200,,duo,d1|d2\n\
    1.0,d2,1210,,duo,d1|d2\n\
    2.0,s1,1300,,,\n\
    2.5,s2,1310,,,\n";

/// The ended codes of a report, by player.
fn ended(report: &matchplane_matchmaker::simulate::Report) -> Vec<(String, String)> {
    let mut ended: Vec<_> = report
        .ended
        .iter()
        .map(|e| (e.player_id.clone(), e.code.clone()))
        .collect();
    ended.sort();
    ended
}

/// Recorded rows the current config rules out end at the first cycle with
/// their code on either side of a comparison, as a server replay ends them
/// (docs/simulate.md, "`arrivalsCsv`"); a value no config takes is still
/// refused.
#[test]
fn recorded_rows_the_config_rules_out_end_on_both_sides_alike() {
    let wide = scenario(None)["gameMode"].clone();
    let expected = vec![
        ("d1".to_owned(), "PARTIES_NOT_ENABLED".to_owned()),
        ("d2".to_owned(), "PARTIES_NOT_ENABLED".to_owned()),
        ("low".to_owned(), "MMR_OUT_OF_RANGE".to_owned()),
    ];
    // The narrowed mode as `a`, the wide one as `b`, and the other way.
    for (a, b) in [(narrowed(), wide.clone()), (wide.clone(), narrowed())] {
        let body = json!({"gameMode": a, "compare": b, "seed": 1, "until": 30});
        let mut s = Scenario::parse(&body.to_string()).unwrap();
        s.add_arrivals_csv(RECORDED, "arrivalsCsv").unwrap();
        let c = compare(&s, &s.compare.clone().unwrap());
        let (narrow, _) = if a == narrowed() {
            (&c.a, &c.b)
        } else {
            (&c.b, &c.a)
        };
        assert_eq!(ended(narrow), expected);
        assert!(
            narrow.ended.iter().all(|e| e.at <= 1.0),
            "{:?}",
            narrow.ended
        );
        assert_eq!(narrow.stats.matched_players, 2);
    }
    // A malformed value is refused, and only it.
    let body = json!({"gameMode": narrowed(), "seed": 1, "until": 30});
    let mut s = Scenario::parse(&body.to_string()).unwrap();
    let bad = format!("{RECORDED}3.0,huge,1e12,,,\n");
    let err = s.add_arrivals_csv(&bad, "arrivalsCsv").unwrap_err();
    let found: Vec<_> = err.0.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(found, ["VALIDATION_ERROR"], "{err:?}");
}
