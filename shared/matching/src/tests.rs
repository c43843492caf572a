//! Case tables: each case submits orders in turn and states the fills and what rests.

use super::*;

fn order(id: OrderId, member: u64, side: Side, price: u32, quantity: Qty) -> Order<u32> {
    Order {
        id,
        member,
        side,
        kind: Kind::Limit,
        price,
        quantity,
        remaining: quantity,
        contingency: Contingency::None,
        disclosed: true,
        expires: None,
    }
}

fn buy(id: OrderId, member: u64, price: u32, quantity: Qty) -> Order<u32> {
    order(id, member, Side::Buy, price, quantity)
}

fn sell(id: OrderId, member: u64, price: u32, quantity: Qty) -> Order<u32> {
    order(id, member, Side::Sell, price, quantity)
}

fn aon(o: Order<u32>) -> Order<u32> {
    Order {
        contingency: Contingency::AllOrNone,
        ..o
    }
}

fn min(o: Order<u32>, n: Qty) -> Order<u32> {
    Order {
        contingency: Contingency::MinimumQuantity(n),
        ..o
    }
}

fn rfq(o: Order<u32>) -> Order<u32> {
    Order { kind: Kind::Rfq, ..o }
}

/// (bid, ask, price, quantity)
type F = (OrderId, OrderId, u32, Qty);

struct Case {
    name: &'static str,
    orders: Vec<Order<u32>>,
    fills: Vec<F>,
    /// (order, remaining) of every order left on the book, bids best first, then offers.
    resting: Vec<(OrderId, Qty)>,
}

fn run(case: Case) {
    let mut book = Book::new();
    let mut fills = Vec::new();
    for o in case.orders {
        fills.extend(book.submit(o).into_iter().map(|f| (f.bid, f.ask, f.price, f.quantity)));
    }
    assert_eq!(fills, case.fills, "{}: fills", case.name);
    let resting: Vec<(OrderId, Qty)> = book.orders().map(|o| (o.id, o.remaining)).collect();
    assert_eq!(resting, case.resting, "{}: resting", case.name);
}

#[test]
fn matching_case_table() {
    let cases = vec![
        Case {
            name: "no cross: both rest",
            orders: vec![buy(1, 1, 10, 100), sell(2, 2, 11, 100)],
            fills: vec![],
            resting: vec![(1, 100), (2, 100)],
        },
        Case {
            name: "a crossing bid trades at the resting offer's price",
            orders: vec![sell(1, 1, 10, 100), buy(2, 2, 12, 100)],
            fills: vec![(2, 1, 10, 100)],
            resting: vec![],
        },
        Case {
            name: "a crossing offer trades at the resting bid's price",
            orders: vec![buy(1, 1, 12, 100), sell(2, 2, 10, 100)],
            fills: vec![(1, 2, 12, 100)],
            resting: vec![],
        },
        Case {
            name: "partial fill: the taker's remainder rests",
            orders: vec![sell(1, 1, 10, 40), buy(2, 2, 10, 100)],
            fills: vec![(2, 1, 10, 40)],
            resting: vec![(2, 60)],
        },
        Case {
            name: "partial fill: the maker's remainder keeps its place",
            orders: vec![sell(1, 1, 10, 100), sell(2, 3, 10, 100), buy(3, 2, 10, 30)],
            fills: vec![(3, 1, 10, 30)],
            resting: vec![(1, 70), (2, 100)],
        },
        Case {
            name: "best price first, then oldest first",
            orders: vec![
                sell(1, 1, 11, 10),
                sell(2, 3, 10, 10),
                sell(3, 4, 10, 10),
                buy(4, 2, 11, 25),
            ],
            fills: vec![(4, 2, 10, 10), (4, 3, 10, 10), (4, 1, 11, 5)],
            resting: vec![(1, 5)],
        },
        Case {
            name: "a bid walks no further than its limit",
            orders: vec![sell(1, 1, 10, 10), sell(2, 3, 12, 10), buy(3, 2, 11, 30)],
            fills: vec![(3, 1, 10, 10)],
            resting: vec![(3, 20), (2, 10)],
        },
        Case {
            name: "an offer walks the bids from the highest",
            orders: vec![buy(1, 1, 9, 10), buy(2, 3, 11, 10), sell(3, 2, 9, 15)],
            fills: vec![(2, 3, 11, 10), (1, 3, 9, 5)],
            resting: vec![(1, 5)],
        },
        Case {
            name: "no self-match: the same member's offer is skipped and keeps its place",
            orders: vec![sell(1, 7, 10, 10), sell(2, 3, 11, 10), buy(3, 7, 11, 10)],
            fills: vec![(3, 2, 11, 10)],
            resting: vec![(1, 10)],
        },
        Case {
            name: "no self-match: crossed orders of one member both rest",
            orders: vec![sell(1, 7, 10, 10), buy(2, 7, 12, 10)],
            fills: vec![],
            resting: vec![(2, 10), (1, 10)],
        },
        Case {
            name: "RFQ never matches",
            orders: vec![rfq(sell(1, 1, 1, 10)), buy(2, 2, 100, 10), rfq(buy(3, 3, 100, 10))],
            fills: vec![],
            resting: vec![(2, 10), (1, 10), (3, 10)],
        },
        Case {
            name: "all or none taker: skips a maker too small, fills whole from a larger one",
            orders: vec![sell(1, 1, 10, 50), sell(2, 3, 11, 100), aon(buy(3, 2, 11, 80))],
            fills: vec![(3, 2, 11, 80)],
            resting: vec![(1, 50), (2, 20)],
        },
        Case {
            name: "all or none taker: nothing big enough, it rests whole",
            orders: vec![sell(1, 1, 10, 50), sell(2, 3, 10, 50), aon(buy(3, 2, 10, 80))],
            fills: vec![],
            resting: vec![(3, 80), (1, 50), (2, 50)],
        },
        Case {
            name: "all or none maker: skipped by a smaller taker, taken whole by a larger",
            orders: vec![aon(sell(1, 1, 10, 50)), buy(2, 2, 10, 30), buy(3, 3, 10, 60)],
            fills: vec![(3, 1, 10, 50)],
            resting: vec![(2, 30), (3, 10)],
        },
        Case {
            name: "minimum quantity taker: only matches of at least the threshold",
            orders: vec![sell(1, 1, 10, 20), sell(2, 3, 10, 60), min(buy(3, 2, 10, 100), 50)],
            fills: vec![(3, 2, 10, 60)],
            resting: vec![(3, 40), (1, 20)],
        },
        Case {
            name: "minimum quantity maker: a small taker passes it by",
            orders: vec![min(sell(1, 1, 10, 100), 30), sell(2, 3, 11, 100), buy(3, 2, 11, 20)],
            fills: vec![(3, 2, 11, 20)],
            resting: vec![(1, 100), (2, 80)],
        },
        Case {
            name: "minimum quantity: a remainder below the threshold no longer matches",
            orders: vec![min(buy(1, 1, 10, 100), 40), sell(2, 2, 10, 70), sell(3, 3, 10, 30)],
            fills: vec![(1, 2, 10, 70)],
            resting: vec![(1, 30), (3, 30)],
        },
        Case {
            name: "hidden price matches like any other",
            orders: vec![
                Order {
                    disclosed: false,
                    ..sell(1, 1, 10, 10)
                },
                buy(2, 2, 10, 10),
            ],
            fills: vec![(2, 1, 10, 10)],
            resting: vec![],
        },
    ];
    for case in cases {
        run(case);
    }
}

#[test]
fn cancel_takes_an_order_off_wherever_it_rests() {
    let mut book = Book::new();
    book.submit(buy(1, 1, 10, 10));
    book.submit(buy(2, 2, 10, 10));
    book.submit(rfq(sell(3, 3, 0, 5)));
    assert_eq!(book.cancel(1).map(|o| o.id), Some(1));
    assert_eq!(book.cancel(1), None);
    assert_eq!(book.cancel(3).map(|o| o.kind), Some(Kind::Rfq));
    assert_eq!(book.orders().map(|o| o.id).collect::<Vec<_>>(), vec![2]);
    assert_eq!(book.cancel(2).map(|o| o.remaining), Some(10));
    assert!(book.is_empty());
    assert_eq!(book.quote(Side::Buy), Quote::None);
}

#[test]
fn a_cancelled_partial_fill_keeps_its_fills() {
    let mut book = Book::new();
    book.submit(sell(1, 1, 10, 100));
    book.submit(buy(2, 2, 10, 40));
    let cancelled = book.cancel(1).expect("resting");
    assert_eq!((cancelled.filled(), cancelled.remaining), (40, 60));
}

#[test]
fn expire_takes_off_only_what_is_due() {
    let mut book = Book::new();
    book.submit(Order {
        expires: Some(100),
        ..buy(1, 1, 10, 10)
    });
    book.submit(Order {
        expires: Some(200),
        ..buy(2, 2, 9, 10)
    });
    book.submit(buy(3, 3, 8, 10));
    let expired: Vec<OrderId> = book.expire(150).iter().map(|o| o.id).collect();
    assert_eq!(expired, vec![1]);
    assert_eq!(book.orders().map(|o| o.id).collect::<Vec<_>>(), vec![2, 3]);
}

#[test]
fn uncross_matches_in_time_order_at_the_open() {
    let mut book = Book::new();
    book.rest(sell(1, 1, 10, 10));
    book.rest(buy(2, 2, 12, 15));
    book.rest(sell(3, 3, 9, 10));
    book.rest(buy(4, 4, 8, 5));
    // Replayed in time order: 2 arrives after 1 and takes it at 10; 3 then meets 2's remainder at 12.
    let fills: Vec<F> = book
        .uncross()
        .into_iter()
        .map(|f| (f.bid, f.ask, f.price, f.quantity))
        .collect();
    assert_eq!(fills, vec![(2, 1, 10, 10), (2, 3, 12, 5)]);
    assert_eq!(
        book.orders().map(|o| (o.id, o.remaining)).collect::<Vec<_>>(),
        vec![(4, 5), (3, 5)]
    );
    assert!(book.uncross().is_empty(), "an uncrossed book has nothing more to match");
}

#[test]
fn the_quote_is_the_best_level_or_rfq_or_nothing() {
    let mut book = Book::new();
    assert_eq!(book.quote(Side::Sell), Quote::None);
    book.submit(rfq(sell(1, 1, 0, 10)));
    assert_eq!(book.quote(Side::Sell), Quote::Rfq);
    book.submit(Order {
        disclosed: false,
        ..sell(2, 1, 12, 10)
    });
    assert_eq!(
        book.quote(Side::Sell),
        Quote::Price {
            price: 12,
            quantity: 10,
            disclosed: false
        }
    );
    book.submit(sell(3, 1, 12, 5));
    book.submit(buy(4, 2, 10, 7));
    book.submit(buy(5, 2, 11, 3));
    assert_eq!(
        book.quote(Side::Sell),
        Quote::Price {
            price: 12,
            quantity: 5,
            disclosed: true
        },
        "the hidden order's 10 shares do not show beside the price they would tell"
    );
    assert_eq!(
        book.quote(Side::Buy),
        Quote::Price {
            price: 11,
            quantity: 3,
            disclosed: true
        }
    );
    assert_eq!(book.get(5).map(|o| o.remaining), Some(3));
}
