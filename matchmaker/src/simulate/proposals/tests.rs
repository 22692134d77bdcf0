//! The simulation's proposals: made, declined, timed out, cancelled, and
//! the figures and table they give.

#![allow(clippy::unwrap_used)]
use super::super::{run, Scenario};

fn scenario(arrivals: &str, cooldown: f64) -> Scenario {
    Scenario::parse(&format!(
        r#"{{"gameMode": {{"name": "duel", "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 1, "ticketTtlSeconds": 600,
            "algorithm": {{"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                           "baseTolerance": 50, "expansionMultiplier": 2}},
            "acceptance": {{"timeoutSeconds": 10, "declineCooldownSeconds": {cooldown}}}}},
          "seed": 1, "until": 60, "arrivals": [{arrivals}]}}"#
    ))
    .unwrap()
}

#[test]
fn everyone_accepting_makes_the_match_when_the_last_accepts() {
    let report = run(&scenario(
        r#"{"at": 0, "playerId": "a", "mmr": 1500},
           {"at": 0, "playerId": "b", "mmr": 1500, "answer": {"after": 4}}"#,
        0.0,
    ));
    assert_eq!(report.proposals.len(), 1);
    let p = &report.proposals[0];
    assert_eq!((p.at, p.outcome, p.closed_at), (1.0, "made", Some(5.0)));
    assert_eq!(report.matches.len(), 1);
    assert_eq!(report.matches[0].at, 5.0);
    // The wait runs until the match is made, not until it is proposed.
    assert_eq!(report.stats.wait_seconds.max, Some(5.0));
    let a = report.stats.acceptance.unwrap();
    assert_eq!((a.proposals, a.made, a.accepted_share), (1, 1, Some(1.0)));
}

#[test]
fn a_decline_requeues_the_other_with_its_wait_and_cools_the_decliner_down() {
    let report = run(&scenario(
        r#"{"at": 0, "playerId": "a", "mmr": 1500},
           {"at": 0, "playerId": "b", "mmr": 1500, "answer": {"accept": false, "after": 2}},
           {"at": 5, "playerId": "c", "mmr": 1500},
           {"at": 6, "playerId": "b", "mmr": 1500},
           {"at": 40, "playerId": "b", "mmr": 1500}"#,
        30.0,
    ));
    let p = &report.proposals[0];
    assert_eq!(p.outcome, "cancelled");
    assert_eq!(p.declined, ["b"]);
    assert_eq!(p.requeued, ["a"]);
    // a, requeued at 3 with its first queuedAt, is matched with c at 5:
    // its wait counts from 0.
    let second = &report.proposals[1];
    assert_eq!((second.at, second.outcome), (5.0, "made"));
    assert!(report.stats.wait_seconds.max.unwrap() >= 5.0);
    let a = report.stats.acceptance.unwrap();
    assert_eq!((a.declines, a.requeued, a.cooldown_refusals), (1, 1, 1));
    assert_eq!(a.accepted_share, Some(0.5));
    // The decliner failed MATCH_DECLINED; its arrival at 6 was refused
    // by the cooldown, the one at 40 searched again.
    assert!(report
        .ended
        .iter()
        .any(|e| e.player_id == "b" && e.code == "MATCH_DECLINED"));
    assert_eq!(report.unmatched, ["b"]);
}

#[test]
fn the_silent_time_out_and_a_party_is_never_split() {
    let report = run(&Scenario::parse(
        r#"{"gameMode": {"name": "duos", "matchShape": [2, 2],
            "matchmakingCycleDurationSeconds": 1, "parties": {"allowParties": true, "maxSize": 2},
            "algorithm": {"type": "fifo"},
            "acceptance": {"timeoutSeconds": 10}},
          "seed": 1, "until": 30, "arrivals": [
            {"at": 0, "playerId": "a1", "party": {"id": "pa", "members": ["a1", "a2"]}},
            {"at": 0, "playerId": "a2", "party": {"id": "pa", "members": ["a1", "a2"]},
             "answer": {"after": 99}},
            {"at": 0, "playerId": "b1", "party": {"id": "pb", "members": ["b1", "b2"]}},
            {"at": 0, "playerId": "b2", "party": {"id": "pb", "members": ["b1", "b2"]}}]}"#,
    )
    .unwrap());
    let p = &report.proposals[0];
    assert_eq!((p.outcome, p.closed_at), ("cancelled", Some(11.0)));
    assert_eq!(p.timed_out, ["a2"]);
    let mut requeued = p.requeued.clone();
    requeued.sort();
    assert_eq!(requeued, ["b1", "b2"]);
    let code = |player: &str| {
        report
            .ended
            .iter()
            .find(|e| e.player_id == player)
            .map(|e| e.code.as_str())
    };
    assert_eq!(code("a2"), Some("ACCEPTANCE_TIMEOUT"));
    assert_eq!(code("a1"), Some("PARTY_MEMBER_DECLINED"));
    assert_eq!(report.stats.acceptance.unwrap().timeouts, 1);
}

#[test]
fn a_cancel_during_a_proposal_counts_as_a_decline() {
    let report = run(&scenario(
        r#"{"at": 0, "playerId": "a", "mmr": 1500, "answer": {"after": 5}},
           {"at": 0, "playerId": "b", "mmr": 1500, "answer": {"after": 5}},
           {"at": 3, "cancel": "b"}"#,
        0.0,
    ));
    let p = &report.proposals[0];
    assert_eq!((p.outcome, p.closed_at), ("cancelled", Some(3.0)));
    assert_eq!(p.declined, ["b"]);
    assert_eq!(report.unmatched, ["a"]);
}

#[test]
fn the_table_shows_the_acceptance_figures() {
    let report = run(&scenario(
        r#"{"at": 0, "playerId": "a", "mmr": 1500},
           {"at": 0, "playerId": "b", "mmr": 1500, "answer": {"accept": false, "after": 2}}"#,
        0.0,
    ));
    let table = super::super::render_table(&report, 5);
    assert!(
        table.contains(
            "proposals 1   made 0   accepted share 0.0 %   declines 1   timeouts 0   requeued 1"
        ),
        "{table}"
    );
}

#[test]
fn declines_are_drawn_for_the_share_asked() {
    let mut events: Vec<super::super::Event> = (0..10_000)
        .map(|i| super::super::Event::Arrival {
            at: f64::from(i),
            player_id: format!("p{i}"),
            mmr: None,
            ping_ms: None,
            party: None,
            latencies: None,
            data: None,
            answer: None,
            attributes: Default::default(),
        })
        .collect();
    super::assign_declines(&mut events, 0.1, 3.0, 7);
    let declining = events
        .iter()
        .filter(|e| {
            matches!(e, super::super::Event::Arrival { answer: Some(a), .. } if !a.accept && a.after == 3.0)
        })
        .count();
    assert!((900..1100).contains(&declining), "{declining}");
}

#[test]
fn a_mode_without_acceptance_reports_no_proposals() {
    let report = run(&Scenario::parse(
        r#"{"gameMode": {"name": "duel", "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "fifo"}},
          "until": 5, "arrivals": [{"at": 0, "playerId": "a", "answer": {"accept": false}},
                                   {"at": 0, "playerId": "b"}]}"#,
    )
    .unwrap());
    assert!(report.proposals.is_empty());
    assert_eq!(report.stats.acceptance, None);
    assert_eq!(report.matches.len(), 1);
    let json = serde_json::to_value(&report).unwrap();
    assert!(json.get("proposals").is_none());
}
