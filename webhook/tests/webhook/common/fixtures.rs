//! Deliveries to send: a `match.made` with a given player, fresh secrets.

use chrono::{DateTime, Utc};
use matchplane_matchmaker::{MatchedPlayer, ProposedMatch, ProposedTeam};
use matchplane_webhook::payload::{MatchIdentity, MatchMade, Message};
use matchplane_webhook::{generate_secret, Delivery, Secret};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// A fresh `whsec_…` secret from `seed`.
pub fn secret(seed: u64) -> String {
    generate_secret(&mut StdRng::seed_from_u64(seed))
}

/// A 1v1 `match.made` message whose first player is `player_id` with MMR 1500.
pub fn match_message(match_id: &str, player_id: &str) -> Message {
    let player = |id: &str, mmr: f64| MatchedPlayer {
        player_id: id.into(),
        ticket_id: format!("tkt_{id}").into(),
        party_id: None,
        mmr: Some(mmr),
        ping_ms: Some(35.0),
        wait_seconds: 12.4,
        latency_ms: None,
        attributes: Default::default(),
        role: None,
    };
    let proposed = ProposedMatch {
        teams: vec![
            ProposedTeam {
                index: 0,
                players: vec![player(player_id, 1500.0)],
                mean_mmr: Some(1500.0),
                bots: 0,
                bot_roles: Vec::new(),
            },
            ProposedTeam {
                index: 1,
                players: vec![player("player-2", 1530.0)],
                mean_mmr: Some(1530.0),
                bots: 0,
                bot_roles: Vec::new(),
            },
        ],
        mmr_spread: 30.0,
        team_imbalance: 30.0,
        match_shape: vec![1, 1],
        seats_open: vec![0, 0],
        bot_mmr: None,
        attributes: Default::default(),
        region: None,
    };
    let identity = MatchIdentity {
        match_id: match_id.to_owned(),
        project_id: "prj_test".to_owned(),
        game_mode: "duel".to_owned(),
        game_mode_version: 1,
        created_at: DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap(),
    };
    Message::match_made(MatchMade::new(identity, &proposed)).unwrap()
}

/// A delivery of `message` to `url` signed with the given secrets.
pub fn delivery(url: &str, message: Message, secrets: &[&str]) -> Delivery {
    let secrets = secrets.iter().map(|s| Secret::parse(s).unwrap()).collect();
    Delivery::new(url, message, secrets).unwrap()
}
