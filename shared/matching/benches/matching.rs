//! Orders per second through the matching core, beside lobster (a public Rust limit order
//! book) on the same stream in the same run: 90% limit orders around one price, 10%
//! cancels of earlier orders. `cargo bench -p matching`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use matching::{Book, Contingency, Kind, Order, Side};

const ORDERS: usize = 100_000;

#[derive(Clone, Copy)]
enum Event {
    Limit {
        id: u64,
        member: u64,
        buy: bool,
        price: u64,
        qty: u64,
    },
    Cancel {
        id: u64,
    },
}

/// A deterministic stream (xorshift), so both books see the same orders.
fn stream() -> Vec<Event> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..ORDERS as u64)
        .map(|id| {
            let r = next();
            if r % 10 == 0 && id > 0 {
                Event::Cancel { id: next() % id }
            } else {
                Event::Limit {
                    id,
                    member: next() % 1000,
                    buy: r & 1 == 0,
                    price: 1000 + next() % 40 - 20,
                    qty: 1 + next() % 100,
                }
            }
        })
        .collect()
}

fn ours(events: &[Event]) -> usize {
    let mut book = Book::new();
    let mut fills = 0;
    for e in events {
        match *e {
            Event::Limit {
                id,
                member,
                buy,
                price,
                qty,
            } => {
                fills += book
                    .submit(Order {
                        id,
                        member,
                        side: if buy { Side::Buy } else { Side::Sell },
                        kind: Kind::Limit,
                        price,
                        quantity: qty,
                        remaining: qty,
                        contingency: Contingency::None,
                        disclosed: true,
                        expires: None,
                    })
                    .len();
            }
            Event::Cancel { id } => {
                book.cancel(id);
            }
        }
    }
    fills
}

fn lobster_book(events: &[Event]) -> usize {
    use lobster::{OrderBook, OrderEvent, OrderType, Side as LSide};
    let mut book = OrderBook::default();
    let mut fills = 0;
    for e in events {
        let event = match *e {
            Event::Limit {
                id, buy, price, qty, ..
            } => OrderType::Limit {
                id: u128::from(id),
                side: if buy { LSide::Bid } else { LSide::Ask },
                qty,
                price,
            },
            Event::Cancel { id } => OrderType::Cancel { id: u128::from(id) },
        };
        if let OrderEvent::Filled { fills: f, .. } | OrderEvent::PartiallyFilled { fills: f, .. } = book.execute(event)
        {
            fills += f.len();
        }
    }
    fills
}

fn matching(c: &mut Criterion) {
    let events = stream();
    let mut group = c.benchmark_group("match");
    group.throughput(Throughput::Elements(ORDERS as u64));
    group.sample_size(20);
    group.bench_function("ours", |b| {
        b.iter_batched(|| &events, |e| ours(e), BatchSize::SmallInput)
    });
    group.bench_function("lobster", |b| {
        b.iter_batched(|| &events, |e| lobster_book(e), BatchSize::SmallInput)
    });
    group.finish();
}

criterion_group!(benches, matching);
criterion_main!(benches);
