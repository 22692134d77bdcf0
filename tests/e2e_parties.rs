//! Whole parties end to end (docs/searching.md#parties): `matchplane api`
//! and `matchplane worker` as separate processes against real PostgreSQL
//! and Redis. A backend ends a whole party's searches in one call; a party
//! whose member never searched waits with `PARTY_INCOMPLETE` naming the
//! member, then fails with `PARTY_INCOMPLETE` once it has stayed
//! incomplete for `parties.incompleteTimeoutSeconds`, long before its
//! tickets would expire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::{redis_url, Deployment};

fn mode() -> Value {
    json!({"name": "duo", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 50, "expansionMultiplier": 2},
    "parties": {"allowParties": true, "maxSize": 2, "incompleteTimeoutSeconds": 5},
    "ticketTtlSeconds": 600})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_party_ends_whole_and_an_incomplete_one_fails_at_its_timeout() {
    let d = Deployment::start("parties", &redis_url(), 1, &[]).await;
    d.mode(mode()).await;
    let ticket = |player: &str, party: &str, members: [&str; 2]| {
        json!({"gameMode": "duo", "playerId": player, "attributes": {"mmr": 1500},
               "party": {"id": party, "members": members}})
    };

    // Party 1: both search, then the backend ends the party.
    let mut whole = Vec::new();
    for player in ["a", "b"] {
        let (id, token) = d.ticket_of(ticket(player, "party-1", ["a", "b"])).await;
        assert_eq!(d.rest_search(&token).await.status, 202);
        whole.push((id, token));
    }
    // Party 2: c searches, d never does.
    let (c, c_token) = d.ticket_of(ticket("c", "party-2", ["c", "d"])).await;
    assert_eq!(d.rest_search(&c_token).await.status, 202);
    let started = Instant::now();

    let path = format!(
        "/v1/projects/{}/parties/party-1/searches?gameMode=duo",
        d.project
    );
    let (status, body) = d
        .api
        .call(reqwest::Method::DELETE, &path, &d.bearer, None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["cancelled"].as_array().map(Vec::len),
        Some(2),
        "{body}"
    );
    for (id, token) in &whole {
        let s = d.status(id, token).await.body;
        assert_eq!(s["status"], "cancelled", "{s}");
    }

    // c waits, saying who is missing, then fails at the timeout.
    let mut waited = false;
    let failed = loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "c never failed"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
        let s = d.status(&c, &c_token).await.body;
        if s["status"] == "searching" && s["waitingReason"]["code"] == "PARTY_INCOMPLETE" {
            assert_eq!(s["waitingReason"]["missing"], json!(["d"]), "{s}");
            waited = true;
        }
        if s["status"] == "failed" {
            break s;
        }
    };
    assert!(waited, "c never waited with PARTY_INCOMPLETE");
    assert!(
        started.elapsed() >= Duration::from_secs(5),
        "failed after {:?}, before the timeout",
        started.elapsed()
    );
    assert_eq!(failed["error"]["code"], "PARTY_INCOMPLETE", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.ends_with("missing: d"), "{message}");
}

/// `parties.mmr` (docs/game-modes.md#parties) through the service: a
/// premade of a 2200 and a 1400 player is matched at the blend of its
/// mean and its strongest member's MMR, 2000 with `{"blend": 0.5}`, so it
/// meets the two players near 2000; the two near its mean of 1800 keep
/// waiting. Teams are still balanced on each player's own MMR.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_premade_is_matched_at_its_blended_mmr() {
    let d = Deployment::start("party_mmr", &redis_url(), 1, &[]).await;
    d.mode(json!({"name": "duos", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 25, "expansionMultiplier": 1.5},
        "parties": {"allowParties": true, "maxSize": 2, "mmr": {"blend": 0.5}}}))
        .await;
    let premade = json!({"id": "premade", "members": ["sara", "tom"]});
    let mut searches = Vec::new();
    for (player, mmr, party) in [
        ("sara", 2200, Some(&premade)),
        ("tom", 1400, Some(&premade)),
        ("ula", 1790, None),
        ("vic", 1810, None),
        ("wes", 1990, None),
        ("xan", 2010, None),
    ] {
        let mut body = json!({"gameMode": "duos", "playerId": player, "attributes": {"mmr": mmr}});
        if let Some(party) = party {
            body["party"] = party.clone();
        }
        let (id, token) = d.ticket_of(body).await;
        assert_eq!(d.rest_search(&token).await.status, 202);
        searches.push((player, id, token));
    }
    let started = Instant::now();
    let sara = loop {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "sara never matched"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
        // Every poll keeps its REST search alive.
        let mut views = Vec::new();
        for (_, id, token) in &searches {
            views.push(d.status(id, token).await.body);
        }
        if views[0]["status"] == "matched" {
            break views[0].clone();
        }
    };
    let mut players: Vec<String> = sara["match"]["teams"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t.as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
        })
        .collect();
    players.sort();
    assert_eq!(players, ["sara", "tom", "wes", "xan"], "{sara}");
    for (player, id, token) in &searches[2..4] {
        let s = d.status(id, token).await.body;
        assert_eq!(s["status"], "searching", "{player}: {s}");
    }
}
