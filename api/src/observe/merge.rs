//! Joining two Prometheus text expositions into one (`matchplane dev`
//! serves the API's and the in-process worker's metrics on one
//! `/metrics`). Both count some families under the same names (the search
//! ends, the match releases: each process counts what it does), and an
//! exposition may declare a family once only, with all its samples in one
//! group; so same-named families are joined and same series summed, as
//! Prometheus would sum the two processes' series.

use std::collections::HashMap;

#[derive(Default)]
struct Family {
    /// `# HELP` / `# TYPE` lines, at most one of each.
    head: Vec<String>,
    /// Series (name and labels) and value, in first-seen order.
    samples: Vec<(String, SampleValue)>,
    index: HashMap<String, usize>,
}

/// A sample's value: a number (summed with the same series'), or text
/// kept as it came when it is not one.
enum SampleValue {
    Number(f64),
    Text(String),
}

#[derive(Default)]
struct Exposition {
    families: Vec<(String, Family)>,
    by_name: HashMap<String, usize>,
}

impl Exposition {
    fn family(&mut self, name: &str) -> &mut Family {
        let at = match self.by_name.get(name) {
            Some(at) => *at,
            None => {
                self.families.push((name.to_owned(), Family::default()));
                self.by_name
                    .insert(name.to_owned(), self.families.len() - 1);
                self.families.len() - 1
            }
        };
        &mut self.families[at].1
    }

    /// The family a sample named `name` belongs to: the declared one it is
    /// the name of, or a histogram's or summary's part of.
    fn family_of(&self, name: &str) -> String {
        if self.by_name.contains_key(name) {
            return name.to_owned();
        }
        ["_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|suffix| name.strip_suffix(suffix))
            .find(|base| self.by_name.contains_key(*base))
            .unwrap_or(name)
            .to_owned()
    }

    fn read(&mut self, text: &str) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if let Some(rest) = line
                .strip_prefix("# HELP ")
                .or_else(|| line.strip_prefix("# TYPE "))
            {
                let name = rest.split(' ').next().unwrap_or(rest);
                let kind = &line[..7];
                let family = self.family(name);
                if !family.head.iter().any(|h| h.starts_with(kind)) {
                    family.head.push(line.to_owned());
                }
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').unwrap_or((line, ""));
            let name = series.split('{').next().unwrap_or(series);
            let family_name = self.family_of(name);
            let family = self.family(&family_name);
            let value = match value.parse::<f64>() {
                Ok(number) => SampleValue::Number(number),
                Err(_) => SampleValue::Text(value.to_owned()),
            };
            match family.index.get(series) {
                Some(at) => {
                    if let (SampleValue::Number(sum), SampleValue::Number(more)) =
                        (&mut family.samples[*at].1, value)
                    {
                        *sum += more;
                    }
                }
                None => {
                    family.index.insert(series.to_owned(), family.samples.len());
                    family.samples.push((series.to_owned(), value));
                }
            }
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for (_, family) in &self.families {
            for line in &family.head {
                out.push_str(line);
                out.push('\n');
            }
            for (series, value) in &family.samples {
                out.push_str(series);
                out.push(' ');
                match value {
                    SampleValue::Number(n) if n.is_infinite() => {
                        out.push_str(if *n > 0.0 { "+Inf" } else { "-Inf" });
                    }
                    SampleValue::Number(n) => out.push_str(&n.to_string()),
                    SampleValue::Text(text) => out.push_str(text),
                }
                out.push('\n');
            }
            out.push('\n');
        }
        out
    }
}

/// `first` and `second` as one exposition: each family declared once, in
/// the order first seen, a series in both summed.
pub fn merge_expositions(first: &str, second: &str) -> String {
    let mut exposition = Exposition::default();
    exposition.read(first);
    exposition.read(second);
    exposition.render()
}

#[cfg(test)]
mod tests {
    use super::merge_expositions;

    #[test]
    fn same_named_families_are_declared_once_and_their_series_summed() {
        let api = "# HELP a_total A\n# TYPE a_total counter\na_total{outcome=\"x\"} 2\na_total{outcome=\"y\"} 0\n\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 0.5\nh_count 1\n\n";
        let worker = "# HELP a_total A\n# TYPE a_total counter\na_total{outcome=\"x\"} 3\n\n# TYPE w gauge\nw 1.5\n\n";
        let merged = merge_expositions(api, worker);
        assert_eq!(
            merged,
            "# HELP a_total A\n# TYPE a_total counter\na_total{outcome=\"x\"} 5\na_total{outcome=\"y\"} 0\n\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 0.5\nh_count 1\n\n# TYPE w gauge\nw 1.5\n\n"
        );
    }
}
