// Package heap is a binary min-heap kept in a plain slice, for the
// priority queues outside the simulator's hot path (Kahn's topological
// sort, m-ETF's list scheduling, the Fiduccia-Mattheyses gain heaps,
// BRKGA's decoder). Push and Pop order elements by <, PushFunc and
// PopFunc by a less function, as slices.Sort and slices.SortFunc do.
//
// The caller owns the slice: h[0] is the least element (the peek), len(h)
// the size, h[:0] empties the heap and keeps its storage. Push and Pop
// keep the heap property: for every i > 0, h[i] is not less than its
// parent h[(i-1)/2].
//
// Prefer Push and Pop where the order fits one key of an ordered type (a
// packed integer, say): they compare with < in place, while PushFunc and
// PopFunc call less through a function value, which the compiler does not
// inline. Measured with callgrind, graph's topological sort and BRKGA's
// decoder took about a quarter more instructions with PushFunc and
// PopFunc than with their former hand-written heaps, and 14% and 30%
// fewer with Push and Pop.
//
// Ties. When the order is not a strict total order on the elements
// pushed (two elements neither less than the other), which of them Pop
// returns first depends on the sift order. All four functions sift
// exactly as the textbook array heap does (Williams 1964; the same order
// as container/heap): a push moves the new element up while it is less
// than its parent; a pop moves the last element to the root and down, to
// the right child only when that one is less than the left, while the
// child is less than it. Two heaps that do this pop equal elements in the
// same order, so code can switch to this package without a change in
// results. A caller that needs an order independent of the push sequence
// makes the order total, for example by breaking ties on an index. NaNs
// break the order of floats under Push and Pop.
//
// May import: no other placer package
package heap
