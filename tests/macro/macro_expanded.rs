//! Keeps `examples/macro-expanded.rs` equal to what `#[batch_alloc]` emits.
//!
//! The example's input is written once, below, in `example!`: the macro
//! hands it to `stringify!` (the input as written) and to the attribute's
//! own expansion (through a hidden proc macro of `batch-alloc-macros`).
//! The test lays the two out with prettyplease and
//! compares the result with the committed file, both parsed and printed
//! again, so that only the code counts, not how rustfmt laid it out. After
//! changing the input or the macro, regenerate the file and read its diff:
//!
//! ```text
//! MACRO_EXPANDED=overwrite cargo test --test macro -- macro_expanded
//! ```

use std::path::Path;

macro_rules! example {
    ($($input:tt)*) => {
        const INPUT: &str = stringify!($($input)*);
        const EXPANDED: &str = batch_alloc_macros::__expand_to_string!($($input)*);
    };
}

example! {
    /// A `for` loop in a function annotated alone. Annotated alone, a
    /// function cannot tell whether it is free or in an impl block, so it
    /// cannot call itself (see `Tree` below): its body runs in a closure,
    /// always inlined, called where it is inside a scope and around a scope
    /// `run_in_scope` opens otherwise. `Box::new` made `box_in_scope_at`,
    /// which takes a slot from the scope open on the thread (each with a
    /// static naming its site, for the `report` feature); the loop itself
    /// is left as written.
    #[batch_alloc]
    pub fn parse(lines: &[&str]) -> Vec<Box<Record>> {
        let mut out = Vec::with_capacity(lines.len());
        for line in lines {
            out.push(Box::new(Record::parse(line)));
        }
        out
    }

    /// A `while let` loop: the same, as is any loop.
    #[batch_alloc]
    pub fn list(n: u64) -> Option<Box<Node>> {
        let mut values = 0..n;
        let mut head = None;
        while let Some(value) = values.next() {
            head = Some(Box::new(Node { value, next: head }));
        }
        head
    }

    /// Nested loops, and a `Box::new` outside any loop: every one is served
    /// by the function's scope.
    #[batch_alloc]
    pub fn grid(rows: usize, cols: usize) -> Vec<Box<Record>> {
        let mut out = vec![];
        out.push(Box::new(Record::new(rows as u64, "grid")));
        for row in 0..rows {
            out.push(Box::new(Record::new(row as u64, "row")));
            for col in 0..cols {
                out.push(Box::new(Record::new((row * cols + col) as u64, "cell")));
            }
        }
        out
    }

    /// A `loop` used as a value, `break` with a box, and what is left as
    /// written: a macro's tokens and `Box::new` as a value (their
    /// allocations are served all the same, as any allocation in a scope).
    #[batch_alloc]
    pub fn first_long(words: &[&str], min: usize) -> (Option<Box<String>>, Vec<Box<usize>>) {
        let mut i = 0;
        let found = loop {
            if i == words.len() {
                break None;
            }
            if words[i].len() >= min {
                break Some(Box::new(words[i].to_string()));
            }
            i += 1;
        };
        let mut lengths = Vec::new();
        for word in words {
            let boxed = |n: usize| Box::new(n);
            lengths.push(boxed(word.len()));
            lengths.extend(vec![Box::new(word.len())]);
            lengths.extend(Some(word.len()).map(Box::new));
        }
        (found, lengths)
    }

    /// Iterator adapters, and a closure that loops: the closures run inside
    /// the scope open where they are called, the function's here.
    #[batch_alloc]
    pub fn lengths(words: &[&str]) -> Vec<Box<usize>> {
        let repeat = |n: usize| {
            let mut out = Vec::new();
            for _ in 0..n {
                out.push(Box::new(n));
            }
            out
        };
        words.iter().map(|w| Box::new(w.len())).chain(repeat(2)).collect()
    }

    /// Methods of an annotated impl block. Default: each keeps its body as
    /// written behind a first statement that, where no scope is open,
    /// opens one and calls the method again inside it with its own
    /// arguments (`Self::insert(self, value)`): inside a scope, one
    /// thread-local read and a test. A trait impl's method calls itself
    /// through the trait where its signature is certainly the trait's
    /// (`Extend::extend` takes an `impl IntoIterator`, which the impl may
    /// bound more loosely: a guard).
    #[derive(Debug)]
    pub struct Tree {
        pub value: u64,
        pub left: Option<Box<Tree>>,
        pub right: Option<Box<Tree>>,
    }

    impl Tree {
        pub fn leaf(value: u64) -> Tree {
            Tree { value, left: None, right: None }
        }
    }

    #[batch_alloc]
    impl Tree {
        pub fn insert(&mut self, value: u64) {
            match value < self.value {
                true => match &mut self.left {
                    Some(left) => left.insert(value),
                    None => self.left = Some(Box::new(Tree::leaf(value))),
                },
                false => match &mut self.right {
                    Some(right) => right.insert(value),
                    None => self.right = Some(Box::new(Tree::leaf(value))),
                },
            }
        }
    }

    #[batch_alloc]
    impl Extend<u64> for Tree {
        fn extend<I: IntoIterator<Item = u64>>(&mut self, values: I) {
            for value in values {
                self.insert(value);
            }
        }
    }

    /// An `async fn` whose loop awaits. Default: the body becomes a future
    /// each of whose polls opens or joins the polling thread's scope and
    /// closes it before returning, so no scope is held while the future is
    /// suspended, wherever its awaits are (in a macro's tokens too).
    #[batch_alloc]
    pub async fn sum_boxed(values: Vec<u64>) -> u64 {
        let mut sum = 0;
        for value in values {
            sum += *Box::new(ready(value).await);
        }
        sum
    }
}

const PRELUDE: &str = r#"
    //! What `#[batch_alloc]` emits: `mod input` holds functions as written,
    //! `mod expanded` the same functions as the attribute rewrites them, and
    //! `main` runs both and checks that they agree, and that the expansion is
    //! served as much as the real attribute.
    //!
    //! Generated by `tests/macro_expanded.rs`, which also keeps it in sync
    //! with the macro: edit the input there, then run
    //! `MACRO_EXPANDED=overwrite cargo test --test macro -- macro_expanded`.
    //!
    //! Run it with `cargo run --example macro-expanded`.
    //!
    //! (Clippy leaves code that a macro generated alone, and this printed
    //! copy of it is plain code: hence `match_single_binding`. The other
    //! lints allowed are about boxing at all, which is the example's point.)

    #![forbid(unsafe_code)]
    #![allow(
        clippy::match_single_binding,
        clippy::vec_box,
        clippy::box_collection,
        clippy::while_let_on_iterator,
        clippy::unnecessary_map_on_constructor,
        clippy::vec_init_then_push
    )]

    use batch_alloc::{stats, BatchAlloc};
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    #[global_allocator]
    static GLOBAL: BatchAlloc = BatchAlloc::system();

    #[derive(Debug, PartialEq)]
    pub struct Record {
        pub id: u64,
        pub kind: &'static str,
        pub text: String,
    }

    impl Record {
        pub fn new(id: u64, kind: &'static str) -> Record {
            Record { id, kind, text: String::new() }
        }

        pub fn parse(line: &str) -> Record {
            Record { id: line.len() as u64, kind: "line", text: line.to_string() }
        }
    }

    #[derive(Debug, PartialEq)]
    pub struct Node {
        pub value: u64,
        pub next: Option<Box<Node>>,
    }

    pub async fn ready(value: u64) -> u64 {
        value
    }
"#;

const MAIN: &str = r#"
    struct NoopWaker;

    impl Wake for NoopWaker {
        fn wake(self: Arc<Self>) {}
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        let waker = Waker::from(Arc::new(NoopWaker));
        let mut cx = Context::from_waker(&waker);
        let mut future = pin!(future);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
        }
    }

    /// Runs `f`; returns its result, printed, and the allocations batch
    /// scopes served meanwhile.
    fn run<R: std::fmt::Debug>(f: impl FnOnce() -> R) -> (String, u64) {
        let before = stats();
        let result = f();
        let after = stats();
        let served = after.scoped_allocations - before.scoped_allocations;
        (format!("{result:?}"), served)
    }

    fn main() {
        let lines = ["alpha", "beta", "gamma", "delta"];
        let words = ["a", "bb", "ccc"];
        let values = || vec![1, 2, 3];
        let runs = [
            ("parse", run(|| input::parse(&lines)), run(|| expanded::parse(&lines))),
            ("list", run(|| input::list(20)), run(|| expanded::list(20))),
            ("grid", run(|| input::grid(3, 4)), run(|| expanded::grid(3, 4))),
            ("first_long", run(|| input::first_long(&words, 2)), run(|| expanded::first_long(&words, 2))),
            ("lengths", run(|| input::lengths(&words)), run(|| expanded::lengths(&words))),
            ("tree", run(|| { let mut t = input::Tree::leaf(5); t.extend([3, 8, 1, 4]); t }), run(|| { let mut t = expanded::Tree::leaf(5); t.extend([3, 8, 1, 4]); t })),
            ("sum_boxed", run(|| block_on(input::sum_boxed(values()))), run(|| block_on(expanded::sum_boxed(values())))),
        ];
        for (name, written, emitted) in runs {
            assert_eq!(written, emitted, "{name}: the printed expansion disagrees");
            println!("{name}: {} allocations from the scope", written.1);
        }
    }
"#;

/// The example file as it should be.
fn render() -> String {
    let source = format!(
        "{PRELUDE}
        /// The functions as written.
        mod input {{
            use super::*;
            use batch_alloc::batch_alloc;
            {INPUT}
        }}
        /// The same functions as `#[batch_alloc]` emits them.
        mod expanded {{
            use super::*;
            {EXPANDED}
        }}

        {MAIN}"
    );
    let file = syn::parse_file(&source).expect("the example parses");
    spaced(&prettyplease::unparse(&file))
}

/// prettyplease puts no blank lines between items: put one before each item
/// that follows a closing brace or the file's attributes and imports.
fn spaced(code: &str) -> String {
    let starts_item = |line: &str| {
        [
            "///", "#[", "pub ", "fn ", "mod ", "impl ", "struct ", "static ",
        ]
        .iter()
        .any(|start| line.starts_with(start))
    };
    let mut out = String::new();
    let mut previous = "";
    for line in code.lines() {
        let trimmed = line.trim_start();
        let after_item = previous == "}"
            || previous.starts_with("#![")
            || previous.starts_with("use ")
            || previous.starts_with("static ")
            || previous.starts_with("//!") && trimmed.starts_with("#![");
        let same_kind = previous.starts_with("#![") && trimmed.starts_with("#![")
            || previous.starts_with("use ") && trimmed.starts_with("use ");
        if after_item && !same_kind && (starts_item(trimmed) || trimmed.starts_with("use ")) {
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
        // Items sit at the top level or one level into a module.
        previous = if line.len() - trimmed.len() <= 4 {
            trimmed
        } else {
            ""
        };
    }
    out
}

/// `code` as rustfmt lays it out, or `None` if rustfmt cannot be run.
/// rustfmt changes a little syntax too (a closure whose body spans lines
/// gets a block), so the expansion goes through it before it is compared
/// with the committed file, which is rustfmt's.
fn rustfmt(code: &str) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(code.as_bytes()).ok()?;
    let output = child.wait_with_output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8(output.stdout).ok())
        .flatten()
}

/// The file's syntax as prettyplease prints it: formatting and comments do
/// not count, doc comments do.
fn normalized(code: &str) -> String {
    match syn::parse_file(code) {
        Ok(file) => prettyplease::unparse(&file),
        Err(error) => format!("does not parse: {error}"),
    }
}

#[test]
fn example_matches_the_expansion() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/macro-expanded.rs");
    let expected = render();
    if std::env::var_os("MACRO_EXPANDED").is_some_and(|v| v == "overwrite") {
        std::fs::write(&path, &expected).expect("write the example");
        // Best effort, so that `cargo fmt --check` stays quiet; the
        // comparison below formats the expansion the same way.
        let _ = std::process::Command::new("rustfmt")
            .args(["--edition", "2021"])
            .arg(&path)
            .status();
        return;
    }
    let expected = rustfmt(&expected).unwrap_or(expected);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let (committed, expected) = (normalized(&committed), normalized(&expected));
    if committed != expected {
        let line = committed
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(expected.lines().count()));
        panic!(
            "examples/macro-expanded.rs is out of date: normalized, it differs at line {}:\n\
             committed: {:?}\nexpected:  {:?}\n\
             regenerate it with `MACRO_EXPANDED=overwrite cargo test --test macro -- macro_expanded` \
             and read the diff",
            line + 1,
            committed.lines().nth(line).unwrap_or(""),
            expected.lines().nth(line).unwrap_or(""),
        );
    }
}
