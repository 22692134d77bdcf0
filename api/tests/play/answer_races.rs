//! Races other matchmakers' users reported, through the API on both pool
//! stores: two clients answering the same ticket at once (the player's
//! REST client and the studio), and an accept racing a cancel of the same
//! proposal: each has exactly one outcome.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_store::pool::closed::CancelledProposal;
use matchplane_store::pool::{Claim, ClaimOutcome, ModeKey, ProposalClaim, SearchState};
use serde_json::{json, Value};
use std::time::Duration;

on_both_pools!(
    two_clients_answering_the_same_ticket_at_once_close_it_once,
    an_accept_racing_a_cancel_has_exactly_one_outcome,
);

/// Rounds of each race (new players each round: a decline cools down).
const ROUNDS: usize = 8;

fn accepting() -> Value {
    let mut mode = duel("duel");
    mode["acceptance"] = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60});
    mode
}

/// Two searching solo tickets of new players: `(ticketId, token)` each.
async fn pair(t: &TestApp, p: &str, key: &str, round: usize) -> [(String, String); 2] {
    let mut out = Vec::new();
    for side in ["a", "b"] {
        let (ticket, token) = t
            .ticket_ok(p, key, solo("duel", &format!("{side}{round}")))
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        out.push((ticket, token));
    }
    [out[0].clone(), out[1].clone()]
}

/// Holds the two tickets as one proposal, as the worker's cycle would.
async fn propose(t: &TestApp, p: &str, tickets: &[(String, String); 2], round: usize) -> String {
    let mode = ModeKey::new(p, "duel");
    let lease = t
        .play
        .pool
        .acquire_lease(&mode, "w", Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let ids: Vec<String> = tickets.iter().map(|(id, _)| id.clone()).collect();
    let proposal = ProposalClaim {
        claim: Claim {
            match_id: match_id.clone(),
            ticket_ids: ids.clone(),
            player_ids: vec![format!("a{round}"), format!("b{round}")],
            record_json: "{}".into(),
        },
        parties: ids,
        accept_by: matchplane_api::play::unix_now() + 20.0,
        cooldown_seconds: 60.0,
    };
    let out = t
        .play
        .pool
        .propose_many(&mode, lease, &[proposal])
        .await
        .unwrap();
    assert!(matches!(out[0], ClaimOutcome::Claimed { .. }), "{out:?}");
    t.play.pool.release_lease(&mode, lease).await.unwrap();
    match_id
}

/// How many made matches the mode's outbox holds (a cancelled proposal's
/// closing record sits there too, and does not count).
async fn made(t: &TestApp, p: &str) -> usize {
    t.play
        .pool
        .read_outbox(
            &ModeKey::new(p, "duel"),
            "test",
            1_000,
            // Pending entries read before count again.
            Duration::ZERO,
        )
        .await
        .unwrap()
        .iter()
        .filter(|e| CancelledProposal::parse(&e.record_json).is_none())
        .count()
}

async fn two_clients_answering_the_same_ticket_at_once_close_it_once(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    for round in 0..ROUNDS {
        let tickets = pair(&t, &p, &key, round).await;
        let [(a, a_token), (b, _)] = &tickets;
        propose(&t, &p, &tickets, round).await;
        let by_client = format!("/v1/searches/{a}/accept");
        let by_studio = format!("/v1/projects/{p}/tickets/{a}/accept");
        let auth = format!("Ticket {a_token}");
        let (one, two) = tokio::join!(
            t.call(Method::POST, &by_client, Some(&auth), None),
            t.call(Method::POST, &by_studio, Some(&key), None),
        );
        for answer in [&one, &two] {
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
            assert_eq!(answer.body["proposal"]["accepted"], json!([a]));
        }
        // Both decline at once: one closes the proposal, the other is the
        // same answer again (told the state); b is requeued once.
        let (client_decline, studio_decline) = (
            format!("/v1/searches/{a}/decline"),
            format!("/v1/projects/{p}/tickets/{a}/decline"),
        );
        let (one, two) = tokio::join!(
            t.call(Method::POST, &client_decline, Some(&auth), None),
            t.call(Method::POST, &studio_decline, Some(&key), None),
        );
        for answer in [&one, &two] {
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        }
        let a_now = t.status(&p, &key, a).await.body;
        assert_eq!(a_now["error"]["code"], "MATCH_DECLINED", "{a_now}");
        let b_now = t.status(&p, &key, b).await.body;
        assert_eq!(b_now["status"], "searching", "{b_now}");
        // b searches once, a not at all; nothing was made.
        assert_eq!(t.play.pool.count_live(&p).await.unwrap(), round as u64 + 1);
        assert_eq!(made(&t, &p).await, 0);
    }
}

async fn an_accept_racing_a_cancel_has_exactly_one_outcome(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let mode = ModeKey::new(&p, "duel");
    let (mut made_count, mut cancelled_count) = (0, 0);
    for round in 0..ROUNDS {
        let tickets = pair(&t, &p, &key, round).await;
        let [(a, a_token), (b, b_token)] = &tickets;
        propose(&t, &p, &tickets, round).await;
        let accepted = t
            .call(
                Method::POST,
                &format!("/v1/searches/{b}/accept"),
                Some(&format!("Ticket {b_token}")),
                None,
            )
            .await;
        assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.body);
        // a's last accept against a's cancel by the studio.
        let (accept_path, a_auth, cancel_path) = (
            format!("/v1/searches/{a}/accept"),
            format!("Ticket {a_token}"),
            format!("/v1/projects/{p}/tickets/{a}"),
        );
        let (accept, cancel) = tokio::join!(
            t.call(Method::POST, &accept_path, Some(&a_auth), None),
            t.call(Method::DELETE, &cancel_path, Some(&key), None),
        );
        let ended = |ticket: &str| {
            let (pool, mode) = (t.play.pool.clone(), mode.clone());
            let ticket = ticket.to_owned();
            async move {
                match pool.search_state(&mode, &ticket).await.unwrap() {
                    Some(SearchState::Ended(e)) => Some(format!("{:?}", e.how)),
                    Some(SearchState::Live(_)) => None,
                    None => Some("unknown".into()),
                }
            }
        };
        let (a_end, b_end) = (ended(a).await, ended(b).await);
        let matched = |e: &Option<String>| e.as_deref().is_some_and(|e| e.contains("Matched"));
        if matched(&a_end) {
            // The accept won: both matched, one record; the cancel found
            // the search matched.
            assert!(matched(&b_end), "a matched, b {b_end:?}");
            assert_eq!(accept.status, StatusCode::OK, "{}", accept.body);
            made_count += 1;
        } else {
            // The cancel won: a cancelled, b back in the pool, nothing made.
            assert!(
                a_end.as_deref().is_some_and(|e| e.contains("Cancelled")),
                "a {a_end:?}, accept {} {}, cancel {} {}",
                accept.status,
                accept.body,
                cancel.status,
                cancel.body
            );
            assert_eq!(b_end, None, "b requeued");
            assert_ne!(cancel.status, StatusCode::INTERNAL_SERVER_ERROR);
            cancelled_count += 1;
        }
        assert_eq!(made(&t, &p).await, made_count, "round {round}");
        // Never both: a live b only when nothing was made this round.
        assert_eq!(
            t.play.pool.count_live(&p).await.unwrap(),
            cancelled_count as u64
        );
    }
    assert_eq!(made_count + cancelled_count, ROUNDS);
}
