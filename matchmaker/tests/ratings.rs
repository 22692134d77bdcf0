//! Glicko-2 from reported results: the cases from the field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::ratings::glicko2::{rate, Game};
use matchplane_matchmaker::ratings::{rate_report, MatchReport, Rating, TeamResult};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

fn r(rating: f64, deviation: f64) -> Rating {
    Rating {
        rating,
        deviation,
        volatility: 0.06,
    }
}

fn report(teams: &[(&[&str], u32)]) -> MatchReport {
    MatchReport {
        match_id: "m1".into(),
        teams: teams
            .iter()
            .map(|(players, place)| TeamResult {
                players: players.iter().map(|p| p.to_string()).collect(),
                place: *place,
            })
            .collect(),
        leavers: Vec::new(),
        participation: BTreeMap::new(),
    }
}

#[test]
fn strong_player_on_a_weak_side_loses_far_less_than_alone() {
    // A 2000 among four 1000s loses a 5v5 to five 1000s: by the team rule
    // the star meets 1000 - (1200 - 2000) = 1800, an expected defeat of a
    // side only 200 above the other; alone against a 1000 it is a 1000-point
    // upset.
    let mut before = HashMap::new();
    let ones = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for p in ones {
        before.insert(p.to_string(), r(1000.0, 80.0));
    }
    before.insert("star".into(), r(2000.0, 80.0));
    let rep = report(&[
        (&["star", "a", "b", "c", "d"], 2),
        (&["e", "f", "g", "h", "i"], 1),
    ]);
    let team = rate_report(&rep, &before, 0.5).unwrap();
    let solo = rate_report(&report(&[(&["star"], 2), (&["e"], 1)]), &before, 0.5).unwrap();
    let team_loss = 2000.0 - team["star"].rating;
    let solo_loss = 2000.0 - solo["star"].rating;
    assert!(team_loss > 0.0);
    // Measured: 26.4 points against 36.2 alone (deviations 80).
    assert!(
        team_loss < 0.75 * solo_loss,
        "team {team_loss} vs solo {solo_loss}"
    );
    // Teammates at the side mean's distance lose as the side does.
    assert!(team["a"].rating < 1000.0);
}

#[test]
fn leavers_lose_fully_and_low_participation_is_not_rated() {
    let before: HashMap<String, Rating> = ["a", "b", "c", "d"]
        .iter()
        .map(|p| (p.to_string(), r(1500.0, 200.0)))
        .collect();
    let mut rep = report(&[(&["a", "b"], 1), (&["c", "d"], 2)]);
    rep.leavers = vec!["b".into()];
    rep.participation.insert("c".into(), 0.1);
    let out = rate_report(&rep, &before, 0.5).unwrap();
    assert!(out["a"].rating > 1500.0);
    assert!(
        out["b"].rating < 1500.0,
        "a leaver on the winning side still loses"
    );
    assert!(!out.contains_key("c"));
    assert!(out["d"].rating < 1500.0);
}

#[test]
fn malformed_reports_are_refused_with_every_failure() {
    let before = HashMap::new();
    let mut rep = report(&[(&["a"], 0)]);
    rep.leavers = vec!["zed".into()];
    let err = rate_report(&rep, &before, 0.5).unwrap_err();
    match err {
        matchplane_matchmaker::ratings::ReportError::Invalid(errors) => assert_eq!(errors.len(), 3),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_leaver_listed_twice_is_refused() {
    let before = HashMap::new();
    let mut rep = report(&[(&["a"], 1), (&["b"], 2)]);
    rep.leavers = vec!["a".into(), "a".into()];
    match rate_report(&rep, &before, 0.5).unwrap_err() {
        matchplane_matchmaker::ratings::ReportError::Invalid(errors) => {
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].field, "leavers");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn long_runs_stay_finite_and_bounded() {
    let mut player = r(1500.0, 350.0);
    let opponent = r(1500.0, 50.0);
    for i in 0..100_000 {
        let score = if i % 3 == 0 { 0.0 } else { 1.0 };
        player = rate(player, &[Game { opponent, score }], 0.5).unwrap();
        assert!(player.is_valid());
        assert!(player.deviation <= 350.0 && player.volatility < 1.0);
    }
}

fn rating() -> impl Strategy<Value = Rating> {
    (800.0..2600.0f64, 30.0..350.0f64, 0.03..0.09f64).prop_map(|(rating, deviation, volatility)| {
        Rating {
            rating,
            deviation,
            volatility,
        }
    })
}

proptest! {
    #[test]
    fn matches_skillratings_on_random_periods(player in rating(), opponents in prop::collection::vec((rating(), 0u8..3), 1..8)) {
        use skillratings::glicko2::{glicko2_rating_period, Glicko2Config, Glicko2Rating};
        use skillratings::Outcomes;
        let games: Vec<Game> = opponents.iter().map(|(o, s)| Game { opponent: *o, score: f64::from(*s) / 2.0 }).collect();
        let ours = rate(player, &games, 0.5).unwrap();
        let theirs = glicko2_rating_period(
            &Glicko2Rating { rating: player.rating, deviation: player.deviation, volatility: player.volatility },
            &opponents.iter().map(|(o, s)| (
                Glicko2Rating { rating: o.rating, deviation: o.deviation, volatility: o.volatility },
                match s { 0 => Outcomes::LOSS, 1 => Outcomes::DRAW, _ => Outcomes::WIN },
            )).collect::<Vec<_>>(),
            &Glicko2Config::new(),
        );
        prop_assert!((ours.rating - theirs.rating).abs() < 1e-6);
        prop_assert!((ours.deviation - theirs.deviation).abs() < 1e-6);
        prop_assert!((ours.volatility - theirs.volatility).abs() < 1e-9);
    }

    #[test]
    fn a_single_win_never_lowers_the_winner(a in rating(), b in rating()) {
        let out = rate(a, &[Game { opponent: b, score: 1.0 }], 0.5).unwrap();
        prop_assert!(out.rating >= a.rating);
    }

    #[test]
    fn listing_order_does_not_matter(ratings in prop::collection::vec(rating(), 4), flip in prop::bool::ANY) {
        let names = ["a", "b", "c", "d"];
        let before: HashMap<String, Rating> = names.iter().zip(&ratings).map(|(n, r)| (n.to_string(), *r)).collect();
        let one = rate_report(&report(&[(&["a", "b"], 1), (&["c", "d"], 2)]), &before, 0.5).unwrap();
        let two = if flip {
            rate_report(&report(&[(&["d", "c"], 2), (&["b", "a"], 1)]), &before, 0.5).unwrap()
        } else {
            rate_report(&report(&[(&["c", "d"], 2), (&["a", "b"], 1)]), &before, 0.5).unwrap()
        };
        prop_assert_eq!(one, two);
    }
}
