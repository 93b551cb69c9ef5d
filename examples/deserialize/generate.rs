//! The generated input: a customer export as JSON, one record per line,
//! the same for a given count on every machine (a fixed-seed generator).

use std::fmt::Write as _;

use super::model::{Address, Dataset, Geo, Line, Order, Record, Status};

/// SplitMix64: small, fast, and the same sequence everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), near enough.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const FIRST: &[&str] = &[
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "Ken",
    "Margaret",
    "Dennis",
    "Radia",
    "Niklaus",
    "Hedy",
    "John",
    "Sophie",
    "Tim",
    "Katherine",
    "Linus",
    "Joan",
    "Bjarne",
];
const LAST: &[&str] = &[
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Thompson",
    "Hamilton",
    "Ritchie",
    "Perlman",
    "Wirth",
    "Lamarr",
    "Backus",
    "Wilson",
    "Berners-Lee",
    "Johnson",
    "Torvalds",
    "Clarke",
    "Stroustrup",
];
const STREETS: &[&str] = &[
    "Market Street",
    "Rue de Rivoli",
    "Königstraße",
    "Via Roma",
    "Calle Mayor",
    "High Street",
    "Main Street",
    "Nevsky Prospekt",
    "Karl-Johans gate",
    "Orchard Road",
];
const CITIES: &[(&str, &str)] = &[
    ("San Francisco", "US"),
    ("Paris", "FR"),
    ("Stuttgart", "DE"),
    ("Rome", "IT"),
    ("Madrid", "ES"),
    ("Oxford", "GB"),
    ("Springfield", "US"),
    ("Saint Petersburg", "RU"),
    ("Oslo", "NO"),
    ("Singapore", "SG"),
];
const TAGS: &[&str] = &[
    "vip",
    "newsletter",
    "wholesale",
    "b2b",
    "returning",
    "gift-card",
    "beta",
    "churn-risk",
    "eu",
    "priority",
];
const PRODUCTS: &[&str] = &["KB", "MS", "MN", "HD", "CB", "DK", "CH", "LP", "SP", "WC"];
const COUPONS: &[&str] = &["WELCOME10", "SPRING", "FREESHIP", "LOYALTY5"];
const NOTES: &[&str] = &[
    "prefers email contact",
    "call before delivery; the \"side door\" is at the back",
    "account merged from legacy system\nsee ticket #4411",
    "tax exempt",
];
const STATUSES: [Status; 5] = [
    Status::Pending,
    Status::Paid,
    Status::Shipped,
    Status::Delivered,
    Status::Returned,
];

/// An ISO 8601 timestamp in 2020–2024.
fn timestamp(rng: &mut Rng) -> String {
    let mut s = String::with_capacity(20);
    let _ = write!(
        s,
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        2020 + rng.below(5),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60)
    );
    s
}

fn order(rng: &mut Rng, id: u64) -> Order {
    let lines: Vec<Line> = (0..1 + rng.below(4))
        .map(|_| Line {
            sku: format!("{}-{:04}", rng.pick(PRODUCTS), rng.below(10_000)),
            qty: 1 + rng.below(5) as u32,
            unit_cents: 199 + rng.below(50_000) as u32,
        })
        .collect();
    Order {
        id,
        placed_at: timestamp(rng),
        status: STATUSES[rng.below(5) as usize],
        total_cents: lines.iter().map(|l| (l.qty * l.unit_cents) as u64).sum(),
        lines,
        coupon: rng.percent(15).then(|| rng.pick(COUPONS).to_string()),
    }
}

/// Record number `id`. Orders per record: 0 to 12, 4 on average, the
/// way order histories spread (many short ones, a few long).
pub fn record(rng: &mut Rng, id: u64) -> Record {
    let first = rng.pick(FIRST);
    let last = rng.pick(LAST);
    let (city, country) = CITIES[rng.below(CITIES.len() as u64) as usize];
    let orders = match rng.below(10) {
        0..=2 => rng.below(2),
        3..=7 => 2 + rng.below(5),
        _ => 6 + rng.below(7),
    };
    Record {
        id,
        name: format!("{first} {last}"),
        email: rng
            .percent(80)
            .then(|| format!("{}.{}{}@example.com", first, last, rng.below(100)).to_lowercase()),
        active: rng.percent(70),
        score: rng.below(100_000) as f64 / 100.0,
        tags: (0..rng.below(4))
            .map(|_| rng.pick(TAGS).to_string())
            .collect(),
        address: Box::new(Address {
            street: format!("{} {}", 1 + rng.below(300), rng.pick(STREETS)),
            city: city.to_string(),
            postcode: format!("{:05}", rng.below(100_000)),
            country: country.to_string(),
            geo: rng.percent(60).then(|| Geo {
                lat: (rng.below(1_800_000) as f64 - 900_000.0) / 10_000.0,
                lon: (rng.below(3_600_000) as f64 - 1_800_000.0) / 10_000.0,
            }),
        }),
        orders: (0..orders)
            .map(|i| Box::new(order(rng, id * 100 + i)))
            .collect(),
        note: rng.percent(10).then(|| rng.pick(NOTES).to_string()),
    }
}

const SOURCE: &str = "crm-export v3 (generated by batch-alloc's deserialize example)";
const EXPORTED_AT: &str = "2024-06-01T00:00:00Z";
const SEED: u64 = 0x5eed_ba7c;

/// The input for `records` records, as JSON text: one record per line.
/// `progress` hears how many records are written, now and then.
pub fn json(records: u64, mut progress: impl FnMut(u64)) -> String {
    let mut rng = Rng::new(SEED);
    let mut out = Vec::with_capacity(records as usize * 640 + 256);
    out.extend_from_slice(b"{\"source\":");
    serde_json::to_writer(&mut out, SOURCE).expect("a Vec takes any write");
    out.extend_from_slice(b",\"exported_at\":");
    serde_json::to_writer(&mut out, EXPORTED_AT).expect("a Vec takes any write");
    out.extend_from_slice(b",\"records\":[\n");
    for id in 0..records {
        if id > 0 {
            out.extend_from_slice(b",\n");
        }
        serde_json::to_writer(&mut out, &record(&mut rng, id)).expect("a Vec takes any write");
        if id % 10_000 == 0 {
            progress(id);
        }
    }
    out.extend_from_slice(b"\n]}\n");
    progress(records);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The dataset that [`json`] writes, as values (for tests).
pub fn dataset(records: u64) -> Dataset {
    let mut rng = Rng::new(SEED);
    Dataset {
        source: SOURCE.to_string(),
        exported_at: EXPORTED_AT.to_string(),
        records: (0..records)
            .map(|id| Box::new(record(&mut rng, id)))
            .collect(),
    }
}
