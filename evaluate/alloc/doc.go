// Package alloc simulates PyTorch's CUDA caching allocator: what it
// reserves from the device (torch.cuda.max_memory_reserved) for a
// sequence of tensor allocations and frees, beside what the tensors hold
// (max_memory_allocated).
//
// The rules are those of c10/cuda/CUDACachingAllocator.cpp at
// pytorch/pytorch 001074d25084fdb87a799823e395a50f5ec044d3
// (DeviceCachingAllocator), with the allocator's defaults
// (max_split_size unlimited, roundup_power2_divisions 0) and one device,
// a memory fraction and a garbage-collection threshold where Config
// sets them:
//   - a request is rounded up to a multiple of 512 bytes (round_size,
//     kMinBlockSize); requests of at most 1 MiB (kSmallSize) go to the
//     small pool, larger ones to the large pool, one pair of pools per
//     stream (BlockComparatorSize orders by stream first: a block freed
//     on one stream is not reused by another);
//   - a request takes the smallest free block of its pool and stream
//     that holds it, the lowest address among equals (get_free_block's
//     lower_bound on size then address);
//   - without one, a new segment is asked of the device
//     (get_allocation_size): 2 MiB (kSmallBuffer) for a small request,
//     20 MiB (kLargeBuffer) for one under 10 MiB (kMinLargeAlloc), else
//     the request rounded up to 2 MiB (kRoundLarge);
//   - the block found is split when what remains is at least 512 bytes
//     in the small pool, more than 1 MiB in the large one
//     (should_split); a block that is not split is counted allocated
//     whole;
//   - a freed block merges with its free neighbours of its segment
//     (free_block, try_merge_blocks); segments are never given back but
//     when the device refuses a new one: then every cached segment with
//     no block in use is released (release_cached_blocks) and the
//     request tried once more; failing again is out of memory;
//   - with expandable segments (PYTORCH_CUDA_ALLOC_CONF
//     expandable_segments:True) each pool of each stream has one segment
//     of address space, mapped in pages of 2 MiB in the small pool and
//     20 MiB (kLargeBuffer) in the large one (ExpandableSegment,
//     find_expandable_block: segment_size is kSmallBuffer or
//     kLargeBuffer); a request that no free block holds maps pages at the
//     lowest address where free and unmapped space together hold it
//     (try_allocate_expandable_block, map_block), every remainder of at
//     least 512 bytes is split off (should_split), and free pages are
//     unmapped only when the device refuses (release_cached_blocks,
//     unmap_block);
//   - with a memory fraction (set_per_process_memory_fraction) the
//     segments reserved stay within that share of the device; with a
//     garbage_collection_threshold too, a request no free block holds
//     first releases whole, non-expandable free segments of the large
//     pools, oldest first, until the reserved bytes are back at the
//     threshold's share of the fraction (garbage_collect_cached_blocks;
//     a block's age is the large pools' get_free_block calls since it
//     was last freed). Without a fraction PyTorch ignores the threshold,
//     and so does this simulator.
//
// Reserved is the bytes of segments (mapped pages) held, Allocated the
// bytes of blocks in use, as torch's reserved_bytes and allocated_bytes
// count them.
//
// May import: graph
package alloc
