//! The ATS matching core (CONTRACT, "ATS"): a price-time priority order book for one
//! security, with no I/O and no async, so that it can be tested exhaustively and run at
//! millions of orders per second.
//!
//! - A limit order trades at the resting (maker) order's price, best price first and, at one
//!   price, oldest first; what is left of it rests on the book.
//! - `RFQ` orders rest on the book but never match.
//! - `All or None` fills only its whole remainder, in one match; `Minimum Quantity` fills only
//!   in matches of at least its threshold. A resting order that cannot take a match is
//!   skipped and keeps its priority.
//! - Two orders of the same member never match each other.
//! - `filled = quantity − remaining` on every order, always.
//!
//! The service decides when the market is open: while it is closed it [`Book::rest`]s
//! orders without matching them, and at the open [`Book::uncross`] matches what crossed,
//! in time order.

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::FxHashMap;

pub type OrderId = u64;
pub type Qty = u64;

/// Prices: any totally ordered value (the service uses decimals, the benchmark integers).
pub trait Price: Ord + Copy {}
impl<T: Ord + Copy> Price for T {}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Buy,
    Sell,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Limit,
    /// A request for quote: shown on the book, never matched.
    Rfq,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contingency {
    None,
    /// Only the whole remainder, in one match.
    AllOrNone,
    /// Only matches of at least this many shares.
    MinimumQuantity(Qty),
}

/// An order as the book holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order<P> {
    pub id: OrderId,
    /// Orders of one member never match each other.
    pub member: u64,
    pub side: Side,
    pub kind: Kind,
    pub price: P,
    pub quantity: Qty,
    pub remaining: Qty,
    pub contingency: Contingency,
    /// `disclosePrice`: the book's quote hides the price when no order at it discloses it.
    pub disclosed: bool,
    /// The instant (any monotone unit the caller chooses) at which the order expires.
    pub expires: Option<u64>,
}

impl<P> Order<P> {
    pub fn filled(&self) -> Qty {
        self.quantity - self.remaining
    }

    /// Whether this order's contingency takes a match of `qty` shares.
    fn accepts(&self, qty: Qty) -> bool {
        match self.contingency {
            Contingency::None => true,
            Contingency::AllOrNone => qty == self.remaining,
            Contingency::MinimumQuantity(min) => qty >= min,
        }
    }
}

/// The shares two orders would trade if their prices crossed: `None` when they may not
/// trade at all (same member, a quote request, a contingency, nothing left).
pub fn match_quantity<P>(a: &Order<P>, b: &Order<P>) -> Option<Qty> {
    if a.member == b.member || a.kind == Kind::Rfq || b.kind == Kind::Rfq || a.side == b.side {
        return None;
    }
    let qty = a.remaining.min(b.remaining);
    (qty > 0 && a.accepts(qty) && b.accepts(qty)).then_some(qty)
}

/// Whether a bid at `bid` and an offer at `ask` cross.
pub fn crosses<P: Price>(bid: P, ask: P) -> bool {
    bid >= ask
}

/// One match: both orders, the maker's price, and what each has left after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fill<P> {
    pub bid: OrderId,
    pub ask: OrderId,
    pub price: P,
    pub quantity: Qty,
    pub bid_remaining: Qty,
    pub ask_remaining: Qty,
}

/// The best of one side, as the CLOB shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quote<P> {
    /// Nothing on this side.
    None,
    /// Only requests for quote.
    Rfq,
    /// The best limit price, whether any order there discloses it, and the shares shown at
    /// it: the disclosed ones when an order discloses it, else all of them.
    Price { price: P, quantity: Qty, disclosed: bool },
}

#[derive(Clone, Debug)]
struct Resting<P> {
    seq: u64,
    order: Order<P>,
}

type Level<P> = VecDeque<Resting<P>>;

/// Where a resting order is: its side's level at its price, or the quote requests.
#[derive(Clone, Copy, Debug)]
struct Loc<P> {
    side: Side,
    kind: Kind,
    price: P,
}

/// The order book of one security.
#[derive(Clone, Debug)]
pub struct Book<P> {
    bids: BTreeMap<P, Level<P>>,
    asks: BTreeMap<P, Level<P>>,
    rfqs: Vec<Resting<P>>,
    index: FxHashMap<OrderId, Loc<P>>,
    seq: u64,
}

impl<P: Price> Default for Book<P> {
    fn default() -> Self {
        Book {
            bids: BTreeMap::new(),
            asks: BTreeMap::new(),
            rfqs: Vec::new(),
            index: FxHashMap::default(),
            seq: 0,
        }
    }
}

impl<P: Price> Book<P> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Matches `order` against the other side, then rests what is left of it (a quote
    /// request rests at once). Answers the fills, in the order they happened.
    pub fn submit(&mut self, mut order: Order<P>) -> Vec<Fill<P>> {
        let mut fills = Vec::new();
        if order.kind == Kind::Limit {
            let mut emptied = Vec::new();
            match order.side {
                Side::Buy => {
                    let levels = self.asks.range_mut(..=order.price);
                    sweep(levels, &mut order, &mut self.index, &mut fills, &mut emptied);
                    for p in emptied {
                        self.asks.remove(&p);
                    }
                }
                Side::Sell => {
                    let levels = self.bids.range_mut(order.price..).rev();
                    sweep(levels, &mut order, &mut self.index, &mut fills, &mut emptied);
                    for p in emptied {
                        self.bids.remove(&p);
                    }
                }
            }
        }
        if order.remaining > 0 {
            self.rest(order);
        }
        fills
    }

    /// Puts `order` on the book behind every order already there, without matching it
    /// (the market is closed, or the book is being loaded from storage in time order).
    pub fn rest(&mut self, order: Order<P>) {
        self.seq += 1;
        let loc = Loc {
            side: order.side,
            kind: order.kind,
            price: order.price,
        };
        self.index.insert(order.id, loc);
        let resting = Resting { seq: self.seq, order };
        match (loc.kind, loc.side) {
            (Kind::Rfq, _) => self.rfqs.push(resting),
            (Kind::Limit, Side::Buy) => self.bids.entry(loc.price).or_default().push_back(resting),
            (Kind::Limit, Side::Sell) => self.asks.entry(loc.price).or_default().push_back(resting),
        }
    }

    /// Takes an order off the book (cancel); `None` when it is not on it.
    pub fn cancel(&mut self, id: OrderId) -> Option<Order<P>> {
        let loc = self.index.remove(&id)?;
        if loc.kind == Kind::Rfq {
            let at = self.rfqs.iter().position(|r| r.order.id == id)?;
            return Some(self.rfqs.remove(at).order);
        }
        let side = match loc.side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        };
        let level = side.get_mut(&loc.price)?;
        let at = level.iter().position(|r| r.order.id == id)?;
        let order = level.remove(at).map(|r| r.order);
        if level.is_empty() {
            side.remove(&loc.price);
        }
        order
    }

    /// Takes off the book every order whose expiry is at or before `now`.
    pub fn expire(&mut self, now: u64) -> Vec<Order<P>> {
        let due: Vec<OrderId> = self
            .orders()
            .filter(|o| o.expires.is_some_and(|at| at <= now))
            .map(|o| o.id)
            .collect();
        due.into_iter().filter_map(|id| self.cancel(id)).collect()
    }

    /// Matches whatever crosses, as if every resting order had arrived again in its time
    /// order: the market's open after orders rested while it was closed.
    pub fn uncross(&mut self) -> Vec<Fill<P>> {
        let mut all: Vec<Resting<P>> = std::mem::take(&mut self.rfqs);
        for (_, level) in std::mem::take(&mut self.bids)
            .into_iter()
            .chain(std::mem::take(&mut self.asks))
        {
            all.extend(level);
        }
        self.index.clear();
        all.sort_unstable_by_key(|r| r.seq);
        all.into_iter().flat_map(|r| self.submit(r.order)).collect()
    }

    pub fn get(&self, id: OrderId) -> Option<&Order<P>> {
        let loc = self.index.get(&id)?;
        let found = match (loc.kind, loc.side) {
            (Kind::Rfq, _) => self.rfqs.iter().find(|r| r.order.id == id),
            (Kind::Limit, Side::Buy) => self.bids.get(&loc.price)?.iter().find(|r| r.order.id == id),
            (Kind::Limit, Side::Sell) => self.asks.get(&loc.price)?.iter().find(|r| r.order.id == id),
        };
        found.map(|r| &r.order)
    }

    /// Every resting order: bids best first, then offers best first, then quote requests.
    pub fn orders(&self) -> impl Iterator<Item = &Order<P>> {
        self.bids
            .values()
            .rev()
            .chain(self.asks.values())
            .flatten()
            .chain(self.rfqs.iter())
            .map(|r| &r.order)
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The best of one side: its best limit price (with the shares there), else `RFQ`
    /// when only quote requests rest on it, else nothing.
    pub fn quote(&self, side: Side) -> Quote<P> {
        let best = match side {
            Side::Buy => self.bids.iter().next_back(),
            Side::Sell => self.asks.iter().next(),
        };
        if let Some((price, level)) = best {
            // Where an order discloses the price, only the disclosed shares show beside it:
            // counting a hidden order's there would tell its price.
            let disclosed = level.iter().any(|r| r.order.disclosed);
            return Quote::Price {
                price: *price,
                quantity: level
                    .iter()
                    .filter(|r| r.order.disclosed || !disclosed)
                    .map(|r| r.order.remaining)
                    .sum(),
                disclosed,
            };
        }
        if self.rfqs.iter().any(|r| r.order.side == side) {
            Quote::Rfq
        } else {
            Quote::None
        }
    }
}

/// Matches `taker` against `levels` (the other side, best price first), oldest first at
/// each price, skipping makers it may not trade with; removes filled makers and records
/// the prices of levels it emptied.
fn sweep<'a, P: Price + 'a>(
    levels: impl Iterator<Item = (&'a P, &'a mut Level<P>)>,
    taker: &mut Order<P>,
    index: &mut FxHashMap<OrderId, Loc<P>>,
    fills: &mut Vec<Fill<P>>,
    emptied: &mut Vec<P>,
) {
    for (price, level) in levels {
        let mut i = 0;
        while i < level.len() && taker.remaining > 0 {
            let maker = &mut level[i].order;
            if let Some(qty) = match_quantity(taker, maker) {
                taker.remaining -= qty;
                maker.remaining -= qty;
                fills.push(fill(taker, maker, *price, qty));
                if maker.remaining == 0 {
                    index.remove(&maker.id);
                    level.remove(i);
                    continue;
                }
            }
            i += 1;
        }
        if level.is_empty() {
            emptied.push(*price);
        }
        if taker.remaining == 0 {
            break;
        }
    }
}

fn fill<P>(taker: &Order<P>, maker: &Order<P>, price: P, quantity: Qty) -> Fill<P> {
    let (bid, ask) = match taker.side {
        Side::Buy => (taker, maker),
        Side::Sell => (maker, taker),
    };
    Fill {
        bid: bid.id,
        ask: ask.id,
        price,
        quantity,
        bid_remaining: bid.remaining,
        ask_remaining: ask.remaining,
    }
}

#[cfg(test)]
mod tests;
