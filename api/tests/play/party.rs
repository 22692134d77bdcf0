//! A party whose member has not searched yet is not a candidate: the core's
//! cycle over the pool's snapshot says `PARTY_INCOMPLETE`.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_matchmaker::{run_cycle, GameModeConfig, IncompleteParties, WaitingReason};
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

on_both_pools!(a_backend_ends_a_whole_partys_searches_in_one_mode);

/// `DELETE …/parties/{partyId}/searches?gameMode=` cancels every live
/// search of the party in that mode, with a `backend` key; the same party's
/// search in another mode and another party's stay; a second call ends
/// nothing more; an unknown mode is `404`, no `gameMode` is `422`.
async fn a_backend_ends_a_whole_partys_searches_in_one_mode(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let backend = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/keys"),
            Some(&key),
            Some(json!({"name": "game", "scopes": ["backend"]})),
        )
        .await;
    assert_eq!(backend.status, StatusCode::CREATED, "{}", backend.body);
    let backend = format!("Bearer {}", backend.body["key"].as_str().unwrap());
    for name in ["trio", "other"] {
        let mut body = duel(name);
        body["matchShape"] = json!([3, 3]);
        body["parties"] = json!({"allowParties": true, "maxSize": 3});
        t.mode(&p, &key, body).await;
    }
    let party = json!({"id": "party-7", "members": ["a", "b", "c"]});
    let mut searching = Vec::new();
    // a and b search in trio; c left the party before searching.
    for player in ["a", "b"] {
        let ticket = json!({"gameMode": "trio", "playerId": player, "attributes": {"mmr": 1500}, "party": party});
        let (id, token) = t.ticket_ok(&p, &key, ticket).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        searching.push(id);
    }
    // The same party in another mode, and another party in trio.
    let elsewhere =
        json!({"gameMode": "other", "playerId": "a", "attributes": {"mmr": 1500}, "party": party});
    let (elsewhere, token) = t.ticket_ok(&p, &key, elsewhere).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let stranger = json!({"gameMode": "trio", "playerId": "z", "attributes": {"mmr": 1500},
        "party": {"id": "party-8", "members": ["z", "y"]}});
    let (stranger, token) = t.ticket_ok(&p, &key, stranger).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);

    let path = format!("/v1/projects/{p}/parties/party-7/searches?gameMode=trio");
    let ended = t.call(Method::DELETE, &path, Some(&backend), None).await;
    assert_eq!(ended.status, StatusCode::OK, "{}", ended.body);
    assert_eq!(ended.body["partyId"], "party-7");
    assert_eq!(ended.body["gameMode"], "trio");
    let mut cancelled: Vec<String> =
        serde_json::from_value(ended.body["cancelled"].clone()).unwrap();
    cancelled.sort();
    searching.sort();
    assert_eq!(cancelled, searching);
    for ticket in &searching {
        let status = t.status(&p, &key, ticket).await;
        assert_eq!(status.body["status"], "cancelled", "{}", status.body);
    }
    for ticket in [&elsewhere, &stranger] {
        let status = t.status(&p, &key, ticket).await;
        assert_eq!(status.body["status"], "searching", "{}", status.body);
    }

    let again = t.call(Method::DELETE, &path, Some(&backend), None).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["cancelled"], json!([]));
    let unknown = format!("/v1/projects/{p}/parties/party-7/searches?gameMode=nope");
    t.call(Method::DELETE, &unknown, Some(&backend), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    let no_mode = format!("/v1/projects/{p}/parties/party-7/searches");
    let refused = t.call(Method::DELETE, &no_mode, Some(&backend), None).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
}

on_both_pools!(ending_a_partys_searches_reaches_members_an_earlier_ticket_named);

/// The members a whole-party cancel ends are every player a ticket of the
/// party named: a later ticket naming other members (which never searched)
/// does not hide the members who are searching.
async fn ending_a_partys_searches_reaches_members_an_earlier_ticket_named(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut body = duel("trio");
    body["matchShape"] = json!([3, 3]);
    body["parties"] = json!({"allowParties": true, "maxSize": 3});
    t.mode(&p, &key, body).await;
    let mut searching = Vec::new();
    for player in ["a", "b"] {
        let ticket = json!({"gameMode": "trio", "playerId": player, "attributes": {"mmr": 1500},
            "party": {"id": "party-9", "members": ["a", "b"]}});
        let (id, token) = t.ticket_ok(&p, &key, ticket).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        searching.push(id);
    }
    // The party changed in the game: c's ticket names c and d, and c
    // never searches.
    let later = json!({"gameMode": "trio", "playerId": "c", "attributes": {"mmr": 1500},
        "party": {"id": "party-9", "members": ["c", "d"]}});
    t.ticket_ok(&p, &key, later).await;

    let path = format!("/v1/projects/{p}/parties/party-9/searches?gameMode=trio");
    let ended = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(ended.status, StatusCode::OK, "{}", ended.body);
    let mut cancelled: Vec<String> =
        serde_json::from_value(ended.body["cancelled"].clone()).unwrap();
    cancelled.sort();
    searching.sort();
    assert_eq!(cancelled, searching);
}

on_both_pools!(ending_a_partys_searches_leaves_a_proposal_alone);

/// A party in an open proposal is left alone by the whole-party end, as
/// docs/game-modes.md says: ending it there would decline for a member
/// (cooling them down), fail the rest of the party and break the match
/// the other players are answering.
async fn ending_a_partys_searches_leaves_a_proposal_alone(pools: Pools) {
    use crate::acceptance::{accepting, propose};
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let party = json!({"id": "pa", "members": ["a1", "a2"]});
    let mut tickets = Vec::new();
    for player in ["a1", "a2", "b", "c"] {
        let mut ticket =
            json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": 1500}});
        if player.starts_with('a') {
            ticket["party"] = party.clone();
        }
        let (id, token) = t.ticket_ok(&p, &key, ticket).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        tickets.push(id);
    }
    let ids: Vec<&str> = tickets.iter().map(String::as_str).collect();
    // A solo stands as its own party, under its ticket id.
    let parties = ["pa", "pa", ids[2], ids[3]];
    propose(&t, &p, &ids, &["a1", "a2", "b", "c"], &parties).await;

    let path = format!("/v1/projects/{p}/parties/pa/searches?gameMode=duel");
    let ended = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(ended.status, StatusCode::OK, "{}", ended.body);
    assert_eq!(ended.body["cancelled"], json!([]), "{}", ended.body);
    for ticket in &tickets {
        let status = t.status(&p, &key, ticket).await;
        assert_eq!(status.body["status"], "proposed", "{}", status.body);
    }
}

on_both_pools!(an_incomplete_party_fails_after_its_timeout);

/// A party left incomplete waits with `PARTY_INCOMPLETE` until
/// `parties.incompleteTimeoutSeconds`, then the cycle's timeout fails its
/// waiting member with `PARTY_INCOMPLETE` naming who is missing; a
/// complete party is never timed.
async fn an_incomplete_party_fails_after_its_timeout(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut body = duel("duo");
    body["matchShape"] = json!([2, 2]);
    body["parties"] = json!({"allowParties": true, "maxSize": 2, "incompleteTimeoutSeconds": 30});
    t.mode(&p, &key, body.clone()).await;
    let mode = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duo"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        mode.body["parties"]["incompleteTimeoutSeconds"], 30,
        "{}",
        mode.body
    );
    let party = json!({"id": "party-7", "members": ["a", "b"]});
    let ticket =
        json!({"gameMode": "duo", "playerId": "a", "attributes": {"mmr": 1500}, "party": party});
    let (a, token) = t.ticket_ok(&p, &key, ticket).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let complete = json!({"id": "party-8", "members": ["c", "d"]});
    for player in ["c", "d"] {
        let ticket = json!({"gameMode": "duo", "playerId": player, "attributes": {"mmr": 1500}, "party": complete});
        let (_, token) = t.ticket_ok(&p, &key, ticket).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }
    let config: GameModeConfig = serde_json::from_value(body).unwrap();
    let pool = t
        .play
        .pool
        .snapshot(&ModeKey::new(&p, "duo"))
        .await
        .unwrap();
    let mut clocks = IncompleteParties::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let now = unix_now();
    for (at, failed) in [(0.0, false), (29.9, false), (30.0, true)] {
        let mut outcome = run_cycle(&config, &pool, now + at, &mut rng);
        clocks.settle(&config, now + at, &mut outcome);
        assert!(outcome.matches.is_empty());
        let waiting: Vec<_> = outcome
            .waiting
            .iter()
            .map(|w| w.ticket_id.to_string())
            .collect();
        assert_eq!(waiting.contains(&a), !failed, "at {at}: {waiting:?}");
        match outcome.failed.as_slice() {
            [] => assert!(!failed, "at {at}"),
            [f] => {
                assert!(failed, "at {at}");
                assert_eq!(f.ticket_id, a);
                assert_eq!(f.code.as_str(), "PARTY_INCOMPLETE");
                assert!(f.message.ends_with("missing: b"), "{}", f.message);
            }
            more => panic!("at {at}: {more:?}"),
        }
    }
    // The complete party was never timed.
    assert!(clocks.is_empty());
}
