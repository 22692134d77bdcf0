//! A party whose member has not searched yet is not a candidate: the core's
//! cycle over the pool's snapshot says `PARTY_INCOMPLETE`.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::StatusCode;
use matchplane_api::play::unix_now;
use matchplane_matchmaker::{run_cycle, GameModeConfig, WaitingReason};
use matchplane_store::pool::ModeKey;
use rand::SeedableRng;
use serde_json::json;

on_both_pools!(a_party_waits_for_every_member);

async fn a_party_waits_for_every_member(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut body = duel("duo");
    body["matchShape"] = json!([2, 2]);
    body["parties"] = json!({"allowParties": true, "maxSize": 2, "keepTogether": true});
    t.mode(&p, &key, body.clone()).await;
    let party = json!({"id": "party-7", "members": ["a", "b"]});
    let mut tokens = Vec::new();
    for player in ["a", "b"] {
        let ticket = json!({"gameMode": "duo", "playerId": player, "attributes": {"mmr": 1500}, "party": party});
        tokens.push(t.ticket_ok(&p, &key, ticket).await);
    }
    assert_eq!(
        t.rest_search(&tokens[0].1).await.status,
        StatusCode::ACCEPTED
    );
    let config: GameModeConfig = serde_json::from_value(body).unwrap();
    let pool = t
        .play
        .pool
        .snapshot(&ModeKey::new(&p, "duo"))
        .await
        .unwrap();
    assert_eq!(pool.len(), 1);
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let outcome = run_cycle(&config, &pool, unix_now(), &mut rng);
    assert_eq!(outcome.candidates, 0);
    assert!(outcome.matches.is_empty());
    let waiting = outcome.waiting.first().expect("a waiting search");
    assert_eq!(waiting.ticket_id, tokens[0].0);
    assert_eq!(
        waiting.reason,
        WaitingReason::PartyIncomplete {
            missing: vec!["b".into()]
        }
    );
}
