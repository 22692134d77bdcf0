//! Whole parties against a real `matchplane dev` (docs/game-modes.md,
//! "parties"): the backend ends a party's searches in one call, and a party
//! whose member never searches fails with `PARTY_INCOMPLETE` naming who is
//! missing, on both transports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use futures::StreamExt;
use matchplane_client::{BackendClient, CreatedTicket, NewTicket, Search, SearchMessage};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Two against two, parties of up to two, an incomplete party failing after 5 s.
fn party_mode(name: &str) -> Value {
    let mut mode = common::duel(name, "http://127.0.0.1:9/hook");
    mode["matchShape"] = json!([2, 2]);
    mode["parties"] = json!({"allowParties": true, "maxSize": 2, "incompleteTimeoutSeconds": 5});
    mode
}

/// A member's ticket: every member's ticket carries the same `party`.
async fn member(
    backend: &BackendClient,
    mode: &str,
    player: &str,
    party: &str,
    members: [&str; 2],
) -> CreatedTicket {
    let ticket = NewTicket {
        game_mode: mode.into(),
        player_id: player.into(),
        attributes: Some(json!({"mmr": 1500})),
        party: Some(json!({"id": party, "members": members})),
    };
    backend.create_ticket(&ticket).await.unwrap()
}

/// Every message until the search ends; fails after 15 s.
async fn until_end(search: &mut Search) -> Vec<SearchMessage> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let Ok(next) = tokio::time::timeout_at(deadline, search.next()).await else {
            panic!(
                "nothing ended the search within 15 s: {:?}",
                common::kinds(&seen)
            );
        };
        let Some(message) = next else { return seen };
        let message = message.unwrap();
        let done = message.ends_search();
        seen.push(message);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn the_backend_ends_a_whole_partys_searches_and_each_client_sees_cancelled() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("sdk-party-end", &party_mode("sdk-party-end"))
        .await
        .unwrap();
    let members = ["ana", "ben"];
    let ana = member(&backend, "sdk-party-end", "ana", "party-1", members).await;
    let ben = member(&backend, "sdk-party-end", "ben", "party-1", members).await;
    let (socket, rest) = common::clients(&dev);
    let mut over_socket = socket.search(&ana.token).await.unwrap();
    let mut over_rest = rest.search(&ben.token).await.unwrap();
    // Both searches are live once the socket said `searching` (REST started on `search`).
    let first = tokio::time::timeout(Duration::from_secs(15), over_socket.next())
        .await
        .unwrap();
    assert_eq!(first.unwrap().unwrap().kind(), "searching");

    let ended = backend
        .end_party_searches("party-1", "sdk-party-end")
        .await
        .unwrap();
    assert_eq!(ended.party_id, "party-1");
    assert_eq!(ended.game_mode, "sdk-party-end");
    let mut cancelled = ended.cancelled.clone();
    cancelled.sort();
    let mut expected = vec![ana.ticket_id.clone(), ben.ticket_id.clone()];
    expected.sort();
    assert_eq!(cancelled, expected);
    let (a, b) = tokio::join!(until_end(&mut over_socket), until_end(&mut over_rest));
    for seen in [&a, &b] {
        assert_eq!(common::kinds(seen).last(), Some(&"cancelled"), "{seen:?}");
    }
    assert_eq!(
        backend.ticket(&ana.ticket_id).await.unwrap().status,
        "cancelled"
    );

    // Nothing is left to end; an unknown mode is a problem.
    let again = backend
        .end_party_searches("party-1", "sdk-party-end")
        .await
        .unwrap();
    assert!(again.cancelled.is_empty(), "{again:?}");
    let unknown = backend
        .end_party_searches("party-1", "nope")
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some("GAME_MODE_NOT_FOUND"), "{unknown}");
    assert_eq!(unknown.problem().unwrap().status, 404);
}

#[tokio::test]
async fn a_party_whose_member_never_searches_fails_with_party_incomplete() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("sdk-party-incomplete", &party_mode("sdk-party-incomplete"))
        .await
        .unwrap();
    // cy's party waits for di, ed's for fay; neither ever searches.
    let mode = "sdk-party-incomplete";
    let cy = member(&backend, mode, "cy", "party-2", ["cy", "di"]).await;
    let ed = member(&backend, mode, "ed", "party-3", ["ed", "fay"]).await;
    let (socket, rest) = common::clients(&dev);
    let started = Instant::now();
    let mut over_socket = socket.search(&cy.token).await.unwrap();
    let mut over_rest = rest.search(&ed.token).await.unwrap();
    let (c, e) = tokio::join!(until_end(&mut over_socket), until_end(&mut over_rest));
    let elapsed = started.elapsed();
    for (seen, missing) in [(&c, "di"), (&e, "fay")] {
        match seen.last() {
            Some(SearchMessage::Failed { code, message }) => {
                assert_eq!(code, "PARTY_INCOMPLETE", "{seen:?}");
                assert!(
                    message.ends_with(&format!("missing: {missing}")),
                    "{message}"
                );
            }
            _ => panic!("not failed: {seen:?}"),
        }
        // Until then it waited, saying whom for.
        let waiting = seen.iter().find_map(|m| match m {
            SearchMessage::Status(s) => s
                .waiting_reason
                .as_ref()
                .filter(|r| r["code"] == "PARTY_INCOMPLETE"),
            _ => None,
        });
        assert_eq!(
            waiting.map(|r| r["missing"].clone()),
            Some(json!([missing])),
            "{seen:?}"
        );
    }
    assert!(
        elapsed >= Duration::from_secs(5),
        "failed after {elapsed:?}, before the 5 s timeout"
    );
    let studio = backend.ticket(&cy.ticket_id).await.unwrap();
    assert_eq!(studio.status, "failed");
    assert_eq!(studio.error.unwrap()["code"], "PARTY_INCOMPLETE");
}
