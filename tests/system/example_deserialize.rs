//! `examples/deserialize.rs`, on small inputs: the generated input reads
//! back as what was generated, through both versions of the visitors; the
//! comparison counts what it says it counts; the user's own files and the
//! command line fail with clear messages instead of panics.
//!
//! The allocator's counters are process-wide, so every test that
//! deserializes runs [`serially`]; the others run plain code only
//! (generation, the command line, error messages, the timing helpers).

#![allow(clippy::vec_box)]

use std::path::PathBuf;

use workloads::deserialize::generate;
use workloads::deserialize::model::Json;
use workloads::deserialize::run::{
    self, compare, describe_json_error, parse, parse_args, Allocator, Invocation, Options, Parsed,
    Variant, Workload,
};
use workloads::deserialize::visitors::{batched, plain};
use workloads::testing::{serially, served};
use workloads::timing::{self, Clock};

/// A file in the temporary directory, removed at the end of the test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, contents: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("batch-alloc-test-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn both_versions_read_back_what_was_generated() {
    serially(|| {
        let n = 400;
        let text = generate::json(n, |_| {});
        let expected = generate::dataset(n);

        let (from_plain, plain_served) = served(|| plain::dataset(&text).unwrap());
        let (from_batched, batched_served) = served(|| batched::dataset(&text).unwrap());
        assert_eq!(from_plain, expected);
        assert_eq!(from_batched, expected);
        assert_eq!(plain_served, 0, "batch-alloc served the plain visitors");
        // Every box and more: the strings and vectors of the records, which
        // the annotated visitors' scopes capture.
        let orders: u64 = expected.records.iter().map(|r| r.orders.len() as u64).sum();
        assert_eq!(expected.boxes(), 2 * n + orders);
        assert!(
            batched_served > expected.boxes(),
            "{batched_served} allocations from batch-alloc"
        );
    });
}

#[test]
fn the_generated_input_has_the_promised_shape() {
    let n = 2000;
    let text = generate::json(n, |_| {});
    let data = generate::dataset(n);
    // "about 1.1 KB of JSON each", says --help.
    let per_record = text.len() as f64 / n as f64;
    assert!((900.0..1300.0).contains(&per_record), "{per_record} bytes");
    // One record per line.
    assert_eq!(text.lines().count() as u64, n + 2);
    // Optional fields both present and absent; order lists of every length.
    let records = &data.records;
    assert!(records.iter().any(|r| r.email.is_none()));
    assert!(records.iter().any(|r| r.email.is_some()));
    assert!(records.iter().any(|r| r.note.is_some()));
    assert!(records.iter().any(|r| r.address.geo.is_none()));
    for len in 0..=12 {
        assert!(
            records.iter().any(|r| r.orders.len() == len),
            "{len} orders"
        );
    }
    assert!(records.iter().all(|r| r.orders.len() <= 12));
    let coupons = records
        .iter()
        .flat_map(|r| &r.orders)
        .filter(|o| o.coupon.is_some())
        .count();
    assert!(coupons > 0);
    // The same input on every call.
    assert_eq!(generate::json(n, |_| {}), text);
}

/// The demonstration's tree as a `serde_json::Value` (which keeps object
/// members sorted by key).
fn to_value(tree: &Json) -> serde_json::Value {
    use serde_json::Value;
    match tree {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Int(i) => Value::from(*i),
        Json::Uint(u) => Value::from(*u),
        Json::Float(f) => Value::from(*f),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(|v| to_value(v)).collect()),
        Json::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_value(v)))
                .collect(),
        ),
    }
}

#[test]
fn the_tree_reads_any_json() {
    serially(|| {
        let generated = generate::json(50, |_| {});
        let odd = r#"{"b": [1, -2, 3.5, 1e300, null, true, "\u00e9\n"], "a": {}, "c": [[], [[0]]],
                      "big": 18446744073709551615, "neg": -9223372036854775808}"#;
        for text in [generated.as_str(), odd, "[]", "0", "\"x\""] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let (tree, served) = served(|| batched::tree(text).unwrap());
            assert!(
                to_value(&tree) == value,
                "the tree differs from serde_json's"
            );
            assert!(plain::tree(text).unwrap() == tree, "the versions differ");
            assert!(served >= tree.boxes(), "every box came from batch-alloc");
        }
        // Members keep their order, repeats included (serde_json's `Value`
        // would sort and merge them).
        let Json::Object(members) = plain::tree(r#"{"z": 1, "a": 2, "z": 3}"#).unwrap() else {
            panic!("an object")
        };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "z"]);
    });
}

#[test]
fn the_records_visitors_check_their_input_as_serde_derive_does() {
    serially(|| {
        let one = generate::json(1, |_| {});
        let record_line = one.lines().nth(1).unwrap();
        let cases = [
            (
                one.replace(r#""name":"#, r#""name":"x","name":"#),
                "duplicate field `name`",
            ),
            (
                one.replace(r#""active":"#, r#""unused":"#),
                "missing field `active`",
            ),
            (
                one.replace(r#""id":0"#, r#""id":"zero""#),
                "invalid type: string",
            ),
            (
                one.replace(r#""address":{"#, r#""address":{"street":"x","#),
                "duplicate field `street`",
            ),
            (
                one.replace(record_line, "[]"),
                "invalid type: sequence, expected a record",
            ),
        ];
        for (text, message) in &cases {
            for variant in [Variant::Plain, Variant::Batched] {
                let error = parse(Workload::Records, variant, text).expect_err(message);
                assert!(error.to_string().starts_with(message), "{error}");
            }
        }
        // Unknown fields are skipped.
        let extra = one.replace(r#""active":"#, r#""extra":{"deep":[1,2]},"active":"#);
        assert_eq!(
            parse(Workload::Records, Variant::Batched, &extra).unwrap(),
            Parsed::Records(generate::dataset(1))
        );
    });
}

#[test]
fn the_comparison_counts_boxes_and_times_every_run() {
    serially(|| {
        let text = generate::json(300, |_| {});
        let mut lines = Vec::new();
        let c = compare(Workload::Records, &text, 3, &Clock::start(), |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].contains("equal"));
        for phase in [&c.plain, &c.batched] {
            assert_eq!(phase.times.runs.len(), 3);
            assert!(phase.times.phase(0).iter().all(|t| !t.is_zero()));
            assert_eq!(phase.boxes, generate::dataset(300).boxes());
        }
        assert_eq!(c.plain.from_batches, 0);
        assert!(
            c.batched.from_batches > c.batched.boxes,
            "boxes, strings and vectors"
        );
        let table = run::table(&c);
        assert!(table.contains("#[batch_alloc]"));
        assert!(table.contains("speedup"));
        assert!(
            table.contains(&timing::thousands(c.batched.from_batches)),
            "{table}"
        );
        // No peak measured here: "n/a".
        assert!(table.contains("n/a"));
    });
}

#[test]
fn the_peak_is_read_from_the_process() {
    serially(|| {
        let file = Scratch::new("peak.json", &generate::json(100, |_| {}));
        let peak = run::peak_child(Workload::Records, Variant::Batched, &file.0);
        if cfg!(target_os = "linux") {
            let kib = peak.unwrap();
            assert!(kib > 1024, "{kib} KiB");
            assert!(kib >= timing::status_kib("VmHWM:").unwrap() / 2);
        }
    });
}

#[test]
fn a_missing_or_malformed_file_is_named_with_the_position() {
    serially(|| {
        let options = |path: &std::path::Path| Options {
            records: 1,
            input: Some(path.to_path_buf()),
            save: None,
            reps: 1,
            allocator: None,
            peak: false,
        };

        let missing = std::env::temp_dir().join("batch-alloc-test-no-such-file.json");
        let error = run::run(Allocator::System, &options(&missing)).unwrap_err();
        assert!(error.contains(&missing.display().to_string()), "{error}");
        assert!(error.starts_with("cannot read"), "{error}");

        let file = Scratch::new("bad.json", "{\n  \"a\": [1, 2,\n        3 4]\n}\n");
        let error = run::run(Allocator::System, &options(&file.0)).unwrap_err();
        let name = file.0.display().to_string();
        assert_eq!(
            error,
            format!("{name}:3:11: not valid JSON: expected `,` or `]`")
        );

        let file = Scratch::new("short.json", "[{\"a\": 1},\n {\"b\": ");
        let error = run::run(Allocator::System, &options(&file.0)).unwrap_err();
        assert!(
            error.starts_with(&format!(
                "{}:2:7: not valid JSON, it ends too early:",
                file.0.display()
            )),
            "{error}"
        );

        let file = Scratch::new("binary.json", "");
        std::fs::write(&file.0, [b'[', 0xff, b']']).unwrap();
        let error = run::run(Allocator::System, &options(&file.0)).unwrap_err();
        assert!(error.contains("valid UTF-8"), "{error}");

        // A well-formed file runs.
        let file = Scratch::new("good.json", r#"{"list": [1, 2, 3, {"x": [4, 5, 6]}]}"#);
        run::run(Allocator::System, &options(&file.0)).unwrap();
    });
}

#[test]
fn a_small_generated_run_goes_through() {
    serially(|| {
        let options = Options {
            records: 200,
            input: None,
            save: None,
            reps: 2,
            allocator: None,
            peak: false,
        };
        run::run(Allocator::System, &options).unwrap();
        let saved = Scratch::new("saved.json", "");
        let options = Options {
            save: Some(saved.0.clone()),
            ..options
        };
        run::run(Allocator::System, &options).unwrap();
        assert_eq!(
            std::fs::read_to_string(&saved.0).unwrap(),
            generate::json(200, |_| {})
        );
    });
}

#[test]
fn the_command_line() {
    let Invocation::Run(defaults) = parse_args(Vec::<&str>::new()).unwrap() else {
        panic!("no arguments run the demonstration")
    };
    assert_eq!(defaults.records, run::DEFAULT_RECORDS);
    assert_eq!(defaults.reps, run::DEFAULT_REPS);
    assert!(defaults.input.is_none() && defaults.peak && defaults.allocator.is_none());

    let Invocation::Run(o) = parse_args([
        "--records",
        "500_000",
        "--reps=3",
        "--allocator",
        "mimalloc",
        "--no-peak",
        "--save",
        "out.json",
    ])
    .unwrap() else {
        panic!("a run")
    };
    assert_eq!(o.records, 500_000);
    assert_eq!(o.reps, 3);
    assert_eq!(o.allocator, Some(Allocator::Mimalloc));
    assert!(!o.peak);
    assert_eq!(o.save, Some(PathBuf::from("out.json")));

    let Invocation::Run(o) = parse_args(["--input", "data.json"]).unwrap() else {
        panic!("a run")
    };
    assert_eq!(o.input, Some(PathBuf::from("data.json")));
    assert_eq!(parse_args(["-h"]).unwrap(), Invocation::Help);
    assert_eq!(
        parse_args(["--peak-child", "tree", "batched", "f.json"]).unwrap(),
        Invocation::PeakChild {
            workload: Workload::Tree,
            variant: Variant::Batched,
            path: PathBuf::from("f.json"),
        }
    );

    for (bad, message) in [
        (
            &["--records"][..],
            "missing argument for option '--records'",
        ),
        (
            &["--records", "0"],
            "--records takes a positive whole number, not `0`",
        ),
        (
            &["--records", "ten"],
            "--records takes a positive whole number, not `ten`",
        ),
        (
            &["--reps", "-1"],
            "--reps takes a positive whole number, not `-1`",
        ),
        (
            &["--allocator", "jemalloc"],
            "--allocator takes system or mimalloc, not `jemalloc`",
        ),
        (&["--fast"], "invalid option '--fast'"),
        (&["data.json"], "unexpected argument \"data.json\""),
        (
            &["--input", "a.json", "--records", "5"],
            "--records and --save are for generated input, not --input",
        ),
    ] {
        let got = parse_args(bad).map_err(|e| e.to_string());
        assert_eq!(got, Err(message.to_string()));
    }
}

#[test]
fn errors_in_generated_input_are_described_too() {
    let error = serde_json::from_str::<serde_json::Value>("[1, 2").unwrap_err();
    assert_eq!(
        describe_json_error("generated input", &error),
        "generated input:1:5: not valid JSON, it ends too early: EOF while parsing a list"
    );
    let error = plain::dataset(r#"{"source": "x", "records": []}"#).unwrap_err();
    assert_eq!(
        describe_json_error("f.json", &error),
        "f.json:1:30: not in the expected shape: missing field `exported_at`"
    );
}

#[test]
fn the_shared_timing_helpers() {
    use std::time::Duration;
    use workloads::timing::{median, runs, share, speedup, table, thousands, Runs};

    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(share(57, 100), "57 (57%)");
    assert_eq!(runs(1), "1 run");
    assert_eq!(runs(9), "9 runs");
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);

    // Pairs, not medians: the second run is slow for both versions.
    let ms = Duration::from_millis;
    let before = [ms(10), ms(100), ms(12)];
    let after = [ms(5), ms(50), ms(6)];
    assert_eq!(speedup(&before, &after), 2.0);

    let mut runs = Runs::<2>::default();
    runs.push([ms(10), ms(1)]);
    runs.push([ms(30), ms(3)]);
    assert_eq!(runs.totals(), [ms(11), ms(33)]);
    assert_eq!(runs.medians(), ["20.0 ms", "2.0 ms", "22.0 ms"]);

    let text = table(
        &["", "time", "boxes"],
        &[
            vec!["plain".into(), "1.5 ms".into(), "1,000".into()],
            vec!["#[batch_alloc]".into(), "12.0 ms".into(), "7".into()],
        ],
    );
    assert_eq!(
        text,
        "                      time   boxes\n  \
         plain             1.5 ms   1,000\n  \
         #[batch_alloc]   12.0 ms       7\n"
    );
}
