//! Random order streams (submits, rests while closed, opens, cancels, expiries) never
//! over-fill an order, never leave two orders that may trade crossed on an open book, and
//! conserve shares.

use std::collections::HashMap;

use matching::{crosses, match_quantity, Book, Contingency, Fill, Kind, Order, OrderId, Qty, Side};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// An order arrives (matched when the market is open).
    Submit(Order<u32>),
    /// The market closes, and an order arrives.
    Rest(Order<u32>),
    /// The market opens.
    Open,
    /// Cancel the n-th order created so far.
    Cancel(usize),
    Expire(u64),
}

fn an_order() -> impl Strategy<Value = Order<u32>> {
    (
        0u64..4,
        any::<bool>(),
        prop_oneof![8 => Just(Kind::Limit), 1 => Just(Kind::Rfq)],
        95u32..106,
        1u64..60,
        prop_oneof![6 => Just(0u64), 2 => Just(1), 2 => 1u64..40],
        any::<bool>(),
        prop::option::of(0u64..100),
    )
        .prop_map(
            |(member, buy, kind, price, quantity, contingency, disclosed, expires)| Order {
                id: 0,
                member,
                side: if buy { Side::Buy } else { Side::Sell },
                kind,
                price,
                quantity,
                remaining: quantity,
                contingency: match contingency {
                    0 => Contingency::None,
                    1 => Contingency::AllOrNone,
                    n => Contingency::MinimumQuantity(n),
                },
                disclosed,
                expires,
            },
        )
}

fn an_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => an_order().prop_map(Op::Submit),
        3 => an_order().prop_map(Op::Rest),
        1 => Just(Op::Open),
        2 => any::<usize>().prop_map(Op::Cancel),
        1 => (0u64..100).prop_map(Op::Expire),
    ]
}

/// What the test knows of every order it created, beside the book.
struct Ledger {
    orders: Vec<Order<u32>>,
    filled: HashMap<OrderId, Qty>,
    bought: Qty,
    sold: Qty,
}

impl Ledger {
    fn record(&mut self, fills: &[Fill<u32>]) {
        for f in fills {
            assert!(f.quantity > 0, "an empty fill: {f:?}");
            let bid = &self.orders[f.bid as usize];
            let ask = &self.orders[f.ask as usize];
            assert_eq!((bid.side, ask.side), (Side::Buy, Side::Sell), "{f:?}");
            assert_ne!(bid.member, ask.member, "a self-match: {f:?}");
            assert!(
                bid.kind == Kind::Limit && ask.kind == Kind::Limit,
                "an RFQ matched: {f:?}"
            );
            assert!(crosses(bid.price, ask.price), "a fill between uncrossed prices: {f:?}");
            assert!(
                f.price == bid.price || f.price == ask.price,
                "a fill off both prices: {f:?}"
            );
            for o in [bid, ask] {
                match o.contingency {
                    Contingency::AllOrNone => {
                        assert_eq!(f.quantity, o.quantity, "all-or-none filled in part: {f:?}")
                    }
                    Contingency::MinimumQuantity(n) => assert!(f.quantity >= n, "below the minimum: {f:?}"),
                    Contingency::None => {}
                }
                *self.filled.entry(o.id).or_default() += f.quantity;
            }
            self.bought += f.quantity;
            self.sold += f.quantity;
        }
    }
}

fn check_book(book: &Book<u32>, ledger: &Ledger, open: bool) {
    let resting: Vec<&Order<u32>> = book.orders().collect();
    for o in &resting {
        let total = ledger.orders[o.id as usize].quantity;
        let filled = ledger.filled.get(&o.id).copied().unwrap_or(0);
        assert!(o.remaining > 0 && o.remaining <= total, "{o:?}");
        assert_eq!(o.filled(), filled, "filled = total − remaining: {o:?}");
    }
    for (id, filled) in &ledger.filled {
        assert!(
            *filled <= ledger.orders[*id as usize].quantity,
            "order {id} over-filled"
        );
    }
    if open {
        for b in resting.iter().filter(|o| o.side == Side::Buy) {
            for a in resting.iter().filter(|o| o.side == Side::Sell) {
                let tradable = crosses(b.price, a.price) && match_quantity(b, a).is_some();
                assert!(!tradable, "crossed on an open book: {b:?} / {a:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_streams_keep_the_invariants(ops in prop::collection::vec(an_op(), 1..120)) {
        let mut book = Book::new();
        let mut ledger = Ledger { orders: Vec::new(), filled: HashMap::new(), bought: 0, sold: 0 };
        let mut open = true;
        for op in ops {
            let closes = matches!(op, Op::Rest(_));
            match op {
                Op::Submit(mut o) | Op::Rest(mut o) => {
                    open &= !closes;
                    o.id = ledger.orders.len() as OrderId;
                    ledger.orders.push(o.clone());
                    if open {
                        let fills = book.submit(o);
                        ledger.record(&fills);
                    } else {
                        book.rest(o);
                    }
                }
                Op::Open => {
                    let fills = book.uncross();
                    ledger.record(&fills);
                    open = true;
                }
                Op::Cancel(n) if !ledger.orders.is_empty() => {
                    let id = (n % ledger.orders.len()) as OrderId;
                    if let Some(o) = book.cancel(id) {
                        prop_assert_eq!(o.filled(), ledger.filled.get(&id).copied().unwrap_or(0));
                        prop_assert!(book.get(id).is_none());
                    }
                }
                Op::Cancel(_) => {}
                Op::Expire(now) => {
                    for o in book.expire(now) {
                        prop_assert!(o.expires.is_some_and(|at| at <= now));
                    }
                    prop_assert!(book.orders().all(|o| o.expires.is_none_or(|at| at > now)));
                }
            }
            check_book(&book, &ledger, open);
        }
        prop_assert_eq!(ledger.bought, ledger.sold);
        let buys: Qty = ledger.orders.iter().filter(|o| o.side == Side::Buy).map(|o| ledger.filled.get(&o.id).copied().unwrap_or(0)).sum();
        let sells: Qty = ledger.orders.iter().filter(|o| o.side == Side::Sell).map(|o| ledger.filled.get(&o.id).copied().unwrap_or(0)).sum();
        prop_assert_eq!(buys, sells, "shares bought equal shares sold");
    }
}
