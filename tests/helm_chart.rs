//! The Helm chart without Helm: every template is valid YAML once its
//! template expressions are replaced by placeholders, and every `.Values`
//! path a template reads exists in `values.yaml`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use regex::Regex;
use std::path::PathBuf;
use yaml_rust2::{Yaml, YamlLoader};

fn chart() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("helm/matchplane")
}

fn templates() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(chart().join("templates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "tpl"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 9,
        "expected the chart's templates, found {}",
        out.len()
    );
    out
}

/// Replaces template expressions: lines that only hold control actions
/// (`if`, `end`, `range`, `with`, `define`, comments) go; a line holding only
/// an `nindent N` pipeline becomes a placeholder mapping entry at indent N;
/// any other `{{ … }}` becomes a plain scalar.
fn substitute(text: &str) -> String {
    let action = Regex::new(r"\{\{-?\s*(.*?)\s*-?\}\}").unwrap();
    let nindent = Regex::new(r"nindent (\d+)").unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        let only_action = action
            .find(trimmed)
            .is_some_and(|m| m.start() == 0 && m.end() == trimmed.len());
        if only_action {
            if let Some(n) = nindent.captures(trimmed) {
                let indent: usize = n[1].parse().unwrap();
                out.push_str(&format!("{}placeholder: included\n", " ".repeat(indent)));
            }
            continue;
        }
        out.push_str(&action.replace_all(line, "placeholder"));
        out.push('\n');
    }
    out
}

#[test]
fn every_template_is_valid_yaml_after_substitution() {
    for (name, text) in templates() {
        if name.ends_with(".tpl") {
            continue;
        }
        let yaml = substitute(&text);
        let docs =
            YamlLoader::load_from_str(&yaml).unwrap_or_else(|e| panic!("{name}: {e}\n{yaml}"));
        for doc in docs {
            let Yaml::Hash(map) = &doc else {
                panic!("{name}: not a mapping")
            };
            for key in ["apiVersion", "kind", "metadata"] {
                assert!(
                    map.contains_key(&Yaml::String(key.into())),
                    "{name}: no {key}"
                );
            }
        }
    }
}

#[test]
fn every_values_path_used_exists_in_values_yaml() {
    let values =
        &YamlLoader::load_from_str(&std::fs::read_to_string(chart().join("values.yaml")).unwrap())
            .unwrap()[0];
    let path = Regex::new(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    let mut checked = 0;
    for (name, text) in templates() {
        for cap in path.captures_iter(&text) {
            let mut node = values;
            for key in cap[1].trim_start_matches('.').split('.') {
                node = &node[key];
                assert!(
                    !node.is_badvalue(),
                    "{name}: .Values{} is not in values.yaml",
                    &cap[1]
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} .Values paths found");
}

#[test]
fn the_chart_has_what_production_needs() {
    let mut all: String = templates().into_iter().map(|(_, t)| t).collect();
    all.push_str(&std::fs::read_to_string(chart().join("values.yaml")).unwrap());
    for needle in [
        "kind: Deployment",
        "kind: Service",
        "kind: HorizontalPodAutoscaler",
        "kind: PodDisruptionBudget",
        "kind: ConfigMap",
        "kind: Secret",
        "kind: Job",
        "pre-install,pre-upgrade",
        "path: /healthz",
        "path: /readyz",
        "runAsNonRoot",
        "resources:",
    ] {
        assert!(all.contains(needle), "chart lacks {needle}");
    }
}

#[test]
fn substitution_is_strict_enough_to_fail() {
    // A template with broken indentation must not pass the YAML check.
    let broken =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n labels: x\n";
    assert!(YamlLoader::load_from_str(&substitute(broken)).is_err());
}

fn template(name: &str) -> String {
    templates()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no template {name}"))
        .1
}

/// With the HPA on, the API Deployment leaves `replicas` to it (a count in
/// the Deployment would reset the HPA's at every `helm upgrade`); and one
/// worker gets no PodDisruptionBudget (`minAvailable: 1` of a single pod
/// blocks every node drain).
#[test]
fn the_hpa_owns_the_api_count_and_a_single_worker_has_no_pdb() {
    let api = template("api-deployment.yaml");
    let guarded = Regex::new(
        r"\{\{-?\s*if not \.Values\.api\.autoscaling\.enabled\s*-?\}\}\s*replicas: \{\{ \.Values\.api\.replicas \}\}\s*\{\{-?\s*end\s*-?\}\}",
    )
    .unwrap();
    assert!(
        guarded.is_match(&api),
        "replicas set with the HPA on:\n{api}"
    );
    assert_eq!(api.matches("replicas:").count(), 1, "{api}");

    let pdb = template("worker-pdb.yaml");
    let action = Regex::new(r"^\{\{-?\s*(.*?)\s*-?\}\}$").unwrap();
    let actions: Vec<String> = pdb
        .lines()
        .filter_map(|l| action.captures(l.trim()).map(|c| c[1].to_owned()))
        .filter(|a| !a.starts_with("/*") && !a.starts_with("include"))
        .collect();
    assert_eq!(
        actions,
        ["if gt (int .Values.worker.replicas) 1", "end"],
        "the worker PDB must render only with more than one worker:\n{pdb}"
    );
    assert!(pdb.trim_end().ends_with("{{- end }}"), "{pdb}");
}

/// The API's readiness probe outlasts `/readyz`'s own wait on a dependency
/// (so a database that drops packets reads `degraded`, not a failed probe),
/// and a stopping API pod keeps serving a while before its SIGTERM.
#[test]
fn the_api_probe_outlasts_readyz_and_the_pod_drains() {
    let api = template("api-deployment.yaml");
    let probe = Regex::new(r"readinessProbe:\n(?:\s+\S.*\n)*?\s+timeoutSeconds: (\d+)").unwrap();
    let timeout: u64 = probe
        .captures(&api)
        .unwrap_or_else(|| panic!("the readiness probe sets no timeoutSeconds:\n{api}"))[1]
        .parse()
        .unwrap();
    let waits = matchplane_store::health::CHECK_TIMEOUT.as_secs();
    assert!(
        timeout > waits,
        "probe timeout {timeout} s, /readyz waits up to {waits} s"
    );
    assert!(
        api.contains("preStop:") && api.contains(".Values.api.preStopSleepSeconds"),
        "{api}"
    );
}
