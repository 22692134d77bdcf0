//! A backfill's fills under the mode's rules (docs/rules.md#backfill): the
//! players one fill seats are roster players for the next fill of the same
//! backfill, with their values as a match carries them (defaults filled in).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::backfill::fill_pass;
use matchplane_matchmaker::rules::AttributeValue;
use matchplane_matchmaker::{BackfillConfig, GameModeConfig, OpenBackfill};
use serde_json::json;

fn mode() -> GameModeConfig {
    let mut config = ruled(&[2, 2]);
    config.backfill = Some(BackfillConfig::default());
    config
}

fn one_seat() -> OpenBackfill {
    OpenBackfill {
        open_roles: Vec::new(),
        backfill_id: "bf_1".into(),
        match_id: "mat_1".into(),
        revision: 1,
        open_seats: vec![1, 0],
        opened_at: 0.0,
        expires_at: 300.0,
        mean_mmr: Some(1500.0),
        pings: Vec::new(),
        region: None,
        roster: Default::default(),
    }
}

#[test]
fn a_later_fill_agrees_with_the_players_an_earlier_fill_seated() {
    let config = mode();
    let inferno = player(
        "f1",
        1500.0,
        0.0,
        json!({"build": "1.4", "maps": ["inferno"], "level": 30}),
    );
    let nuke = player(
        "f2",
        1500.0,
        0.5,
        json!({"build": "1.4", "maps": ["nuke"], "level": 30}),
    );
    let backfill = one_seat();
    let first = fill_pass(
        &config,
        &[inferno, nuke.clone()],
        std::slice::from_ref(&backfill),
        1.0,
    );
    assert_eq!(first.fills.len(), 1);
    let fill = &first.fills[0];
    let seated = &fill.teams[0].players[0];
    assert_eq!(seated.player_id.as_str(), "f1");
    // Its values as a match carries them: the defaults it left out too.
    assert_eq!(
        seated.attributes.get("pool"),
        Some(&AttributeValue::Text("crossplay".into()))
    );
    assert_eq!(
        seated.attributes.get("blocked"),
        Some(&AttributeValue::Set(Vec::new()))
    );

    // The studio asks for one more seat; f2 shares no map with f1.
    let mut grown = backfill.with_fill_roster(fill);
    grown.revision = 2;
    grown.open_seats = vec![1, 0];
    assert_eq!(grown.roster.players.len(), 1);
    let second = fill_pass(&config, std::slice::from_ref(&nuke), &[grown], 2.0);
    assert!(second.fills.is_empty(), "{:?}", second.fills);
    // Without f1 in the roster, f2 would be seated: the roster is what
    // keeps it out.
    let unaware = fill_pass(&config, &[nuke], &[backfill], 2.0);
    assert_eq!(unaware.fills.len(), 1);
}

#[test]
fn a_default_a_seated_player_left_out_binds_the_next_fill() {
    let config = mode();
    // p1 leaves `pool` out: it plays on the default, crossplay.
    let p1 = player(
        "p1",
        1500.0,
        0.0,
        json!({"build": "1.4", "maps": ["dust"], "level": 30}),
    );
    let console = player(
        "p2",
        1500.0,
        0.5,
        json!({"build": "1.4", "maps": ["dust"], "level": 30, "pool": "console"}),
    );
    let backfill = one_seat();
    let first = fill_pass(&config, &[p1], std::slice::from_ref(&backfill), 1.0);
    let mut grown = backfill.with_fill_roster(&first.fills[0]);
    grown.revision = 2;
    grown.open_seats = vec![1, 0];
    // Early on, the platform rule has not turned off for anyone.
    let second = fill_pass(&config, &[console], &[grown], 2.0);
    assert!(second.fills.is_empty(), "{:?}", second.fills);
}

/// A backfill's values are checked as a ticket's: a set's entries distinct,
/// a block list's entries player ids.
#[test]
fn a_backfills_sets_are_checked_as_a_tickets() {
    use matchplane_matchmaker::rules::roster::check_values;
    let config = mode();
    for (values, field) in [
        (json!({"maps": ["dust", "dust"]}), "attributes.maps[1]"),
        (json!({"blocked": ["x", "x"]}), "attributes.blocked[1]"),
        (json!({"blocked": [""]}), "attributes.blocked[0]"),
        (
            json!({"blocked": ["a".repeat(300)]}),
            "attributes.blocked[0]",
        ),
    ] {
        let values = serde_json::from_value(values.clone()).unwrap();
        let errors = check_values(&values, config.attributes.as_ref(), "attributes");
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, [field], "{errors:?}");
    }
    let good = serde_json::from_value(json!({"maps": ["dust", "nuke"], "blocked": ["x"]})).unwrap();
    assert!(check_values(&good, config.attributes.as_ref(), "attributes").is_empty());
}
