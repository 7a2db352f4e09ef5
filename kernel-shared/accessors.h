/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Typed getters for on-disk fields.  Every multi-byte field is stored
 * little-endian and may be unaligned inside a block, so each getter goes
 * through the packed struct and converts; nothing reads a field raw.
 * Beside them, what follows from the format alone: where the superblock
 * copies are, and the sizes that follow from the node size.  This header
 * and uapi/btrfs_tree.h are all the format a file needs, and include no
 * code of kernel-shared/ (btrfs-image restore's layout and the error
 * record use them without the reader).
 *
 * The structs passed in must lie fully inside memory that was checked
 * against the block size first: tree-checker.c checks item bounds and the
 * callers check each item's size before handing its data to a getter.
 */
#ifndef BTRFS_SPACE_ACCESSORS_H
#define BTRFS_SPACE_ACCESSORS_H

#include <endian.h>
#include <stddef.h>
#include "kernel-shared/uapi/btrfs_tree.h"

#define le8toh(x) (x)

#define BTRFS_SETGET_STACK_FUNCS(name, type, member, bits)		\
static inline u##bits btrfs_##name(const type *s)			\
{									\
	return le##bits##toh(s->member);				\
}

/* Quota tree items */
BTRFS_SETGET_STACK_FUNCS(qgroup_status_version, struct btrfs_qgroup_status_item, version, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_status_generation, struct btrfs_qgroup_status_item, generation, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_status_flags, struct btrfs_qgroup_status_item, flags, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_info_rfer, struct btrfs_qgroup_info_item, rfer, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_info_excl, struct btrfs_qgroup_info_item, excl, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_limit_flags, struct btrfs_qgroup_limit_item, flags, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_limit_max_rfer, struct btrfs_qgroup_limit_item, max_rfer, 64)
BTRFS_SETGET_STACK_FUNCS(qgroup_limit_max_excl, struct btrfs_qgroup_limit_item, max_excl, 64)

/* Superblock */
BTRFS_SETGET_STACK_FUNCS(super_bytenr, struct btrfs_super_block, bytenr, 64)
BTRFS_SETGET_STACK_FUNCS(super_flags, struct btrfs_super_block, flags, 64)
BTRFS_SETGET_STACK_FUNCS(super_magic, struct btrfs_super_block, magic, 64)
BTRFS_SETGET_STACK_FUNCS(super_generation, struct btrfs_super_block, generation, 64)
BTRFS_SETGET_STACK_FUNCS(super_root, struct btrfs_super_block, root, 64)
BTRFS_SETGET_STACK_FUNCS(super_chunk_root, struct btrfs_super_block, chunk_root, 64)
BTRFS_SETGET_STACK_FUNCS(super_log_root, struct btrfs_super_block, log_root, 64)
BTRFS_SETGET_STACK_FUNCS(super_total_bytes, struct btrfs_super_block, total_bytes, 64)
BTRFS_SETGET_STACK_FUNCS(super_bytes_used, struct btrfs_super_block, bytes_used, 64)
BTRFS_SETGET_STACK_FUNCS(super_num_devices, struct btrfs_super_block, num_devices, 64)
BTRFS_SETGET_STACK_FUNCS(super_sectorsize, struct btrfs_super_block, sectorsize, 32)
BTRFS_SETGET_STACK_FUNCS(super_nodesize, struct btrfs_super_block, nodesize, 32)
BTRFS_SETGET_STACK_FUNCS(super_leafsize, struct btrfs_super_block, __unused_leafsize, 32)
BTRFS_SETGET_STACK_FUNCS(super_stripesize, struct btrfs_super_block, stripesize, 32)
BTRFS_SETGET_STACK_FUNCS(super_sys_array_size, struct btrfs_super_block, sys_chunk_array_size, 32)
BTRFS_SETGET_STACK_FUNCS(super_chunk_root_generation, struct btrfs_super_block, chunk_root_generation, 64)
BTRFS_SETGET_STACK_FUNCS(super_compat_flags, struct btrfs_super_block, compat_flags, 64)
BTRFS_SETGET_STACK_FUNCS(super_compat_ro_flags, struct btrfs_super_block, compat_ro_flags, 64)
BTRFS_SETGET_STACK_FUNCS(super_incompat_flags, struct btrfs_super_block, incompat_flags, 64)
BTRFS_SETGET_STACK_FUNCS(super_csum_type, struct btrfs_super_block, csum_type, 16)
BTRFS_SETGET_STACK_FUNCS(super_root_level, struct btrfs_super_block, root_level, 8)
BTRFS_SETGET_STACK_FUNCS(super_chunk_root_level, struct btrfs_super_block, chunk_root_level, 8)
BTRFS_SETGET_STACK_FUNCS(super_log_root_level, struct btrfs_super_block, log_root_level, 8)
BTRFS_SETGET_STACK_FUNCS(super_cache_generation, struct btrfs_super_block, cache_generation, 64)
BTRFS_SETGET_STACK_FUNCS(super_uuid_tree_generation, struct btrfs_super_block, uuid_tree_generation, 64)

/* Device item */
BTRFS_SETGET_STACK_FUNCS(stack_device_id, struct btrfs_dev_item, devid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_device_total_bytes, struct btrfs_dev_item, total_bytes, 64)
BTRFS_SETGET_STACK_FUNCS(stack_device_bytes_used, struct btrfs_dev_item, bytes_used, 64)

/* Tree block header */
BTRFS_SETGET_STACK_FUNCS(header_bytenr, struct btrfs_header, bytenr, 64)
BTRFS_SETGET_STACK_FUNCS(header_flags, struct btrfs_header, flags, 64)
BTRFS_SETGET_STACK_FUNCS(header_generation, struct btrfs_header, generation, 64)
BTRFS_SETGET_STACK_FUNCS(header_owner, struct btrfs_header, owner, 64)
BTRFS_SETGET_STACK_FUNCS(header_nritems, struct btrfs_header, nritems, 32)
BTRFS_SETGET_STACK_FUNCS(header_level, struct btrfs_header, level, 8)

/* Keys, items, pointers */
BTRFS_SETGET_STACK_FUNCS(disk_key_objectid, struct btrfs_disk_key, objectid, 64)
BTRFS_SETGET_STACK_FUNCS(disk_key_type, struct btrfs_disk_key, type, 8)
BTRFS_SETGET_STACK_FUNCS(disk_key_offset, struct btrfs_disk_key, offset, 64)
BTRFS_SETGET_STACK_FUNCS(raw_item_offset, struct btrfs_item, offset, 32)
BTRFS_SETGET_STACK_FUNCS(raw_item_size, struct btrfs_item, size, 32)
BTRFS_SETGET_STACK_FUNCS(key_ptr_blockptr, struct btrfs_key_ptr, blockptr, 64)
BTRFS_SETGET_STACK_FUNCS(key_ptr_generation, struct btrfs_key_ptr, generation, 64)

/* Chunk item and stripes */
BTRFS_SETGET_STACK_FUNCS(stack_chunk_length, struct btrfs_chunk, length, 64)
BTRFS_SETGET_STACK_FUNCS(stack_chunk_owner, struct btrfs_chunk, owner, 64)
BTRFS_SETGET_STACK_FUNCS(stack_chunk_stripe_len, struct btrfs_chunk, stripe_len, 64)
BTRFS_SETGET_STACK_FUNCS(stack_chunk_type, struct btrfs_chunk, type, 64)
BTRFS_SETGET_STACK_FUNCS(stack_chunk_sector_size, struct btrfs_chunk, sector_size, 32)
BTRFS_SETGET_STACK_FUNCS(stack_chunk_num_stripes, struct btrfs_chunk, num_stripes, 16)
BTRFS_SETGET_STACK_FUNCS(stack_chunk_sub_stripes, struct btrfs_chunk, sub_stripes, 16)
BTRFS_SETGET_STACK_FUNCS(stack_stripe_devid, struct btrfs_stripe, devid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_stripe_offset, struct btrfs_stripe, offset, 64)

/* Device extent */
BTRFS_SETGET_STACK_FUNCS(stack_dev_extent_chunk_offset, struct btrfs_dev_extent, chunk_offset, 64)
BTRFS_SETGET_STACK_FUNCS(stack_dev_extent_length, struct btrfs_dev_extent, length, 64)

/* Block group item */
BTRFS_SETGET_STACK_FUNCS(stack_block_group_used, struct btrfs_block_group_item, used, 64)
BTRFS_SETGET_STACK_FUNCS(stack_block_group_chunk_objectid, struct btrfs_block_group_item, chunk_objectid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_block_group_flags, struct btrfs_block_group_item, flags, 64)

/* Root item (the fixed v0 part) */
BTRFS_SETGET_STACK_FUNCS(root_generation, struct btrfs_root_item_head, generation, 64)
BTRFS_SETGET_STACK_FUNCS(root_bytenr, struct btrfs_root_item_head, bytenr, 64)
BTRFS_SETGET_STACK_FUNCS(root_bytes_used, struct btrfs_root_item_head, bytes_used, 64)
BTRFS_SETGET_STACK_FUNCS(root_level, struct btrfs_root_item_head, level, 8)

/* Root item: the flags, snapshot and drop fields, the v2 generation */
BTRFS_SETGET_STACK_FUNCS(stack_root_dirid, struct btrfs_root_item_head, root_dirid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_root_refs, struct btrfs_root_item_head, refs, 32)
BTRFS_SETGET_STACK_FUNCS(root_last_snapshot, struct btrfs_root_item_head, last_snapshot, 64)
BTRFS_SETGET_STACK_FUNCS(root_flags, struct btrfs_root_item_head, flags, 64)
BTRFS_SETGET_STACK_FUNCS(root_drop_level, struct btrfs_root_item_head, drop_level, 8)
BTRFS_SETGET_STACK_FUNCS(root_generation_v2, struct btrfs_root_item, generation_v2, 64)

/* Device extent: the owner fields */
BTRFS_SETGET_STACK_FUNCS(stack_dev_extent_chunk_tree, struct btrfs_dev_extent, chunk_tree, 64)
BTRFS_SETGET_STACK_FUNCS(stack_dev_extent_chunk_objectid, struct btrfs_dev_extent, chunk_objectid, 64)

/* Inode item */
BTRFS_SETGET_STACK_FUNCS(stack_inode_generation, struct btrfs_inode_item, generation, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_transid, struct btrfs_inode_item, transid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_size, struct btrfs_inode_item, size, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_nbytes, struct btrfs_inode_item, nbytes, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_nlink, struct btrfs_inode_item, nlink, 32)
BTRFS_SETGET_STACK_FUNCS(stack_inode_mode, struct btrfs_inode_item, mode, 32)
BTRFS_SETGET_STACK_FUNCS(stack_inode_flags, struct btrfs_inode_item, flags, 64)

/* Directory entries, inode refs, root refs */
BTRFS_SETGET_STACK_FUNCS(stack_dir_data_len, struct btrfs_dir_item, data_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_dir_name_len, struct btrfs_dir_item, name_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_dir_type, struct btrfs_dir_item, type, 8)
BTRFS_SETGET_STACK_FUNCS(stack_inode_ref_name_len, struct btrfs_inode_ref, name_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_inode_extref_parent, struct btrfs_inode_extref, parent_objectid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_extref_name_len, struct btrfs_inode_extref, name_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_root_ref_dirid, struct btrfs_disk_root_ref, dirid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_root_ref_name_len, struct btrfs_disk_root_ref, name_len, 16)

/* File extent item */
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_ram_bytes, struct btrfs_file_extent_item, ram_bytes, 64)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_compression, struct btrfs_file_extent_item, compression, 8)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_encryption, struct btrfs_file_extent_item, encryption, 8)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_type, struct btrfs_file_extent_item, type, 8)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_disk_bytenr, struct btrfs_file_extent_item, disk_bytenr, 64)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_disk_num_bytes, struct btrfs_file_extent_item, disk_num_bytes, 64)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_offset, struct btrfs_file_extent_item, offset, 64)
BTRFS_SETGET_STACK_FUNCS(stack_file_extent_num_bytes, struct btrfs_file_extent_item, num_bytes, 64)

/* Extent items and their back references */
BTRFS_SETGET_STACK_FUNCS(stack_extent_refs, struct btrfs_extent_item, refs, 64)
BTRFS_SETGET_STACK_FUNCS(stack_extent_generation, struct btrfs_extent_item, generation, 64)
BTRFS_SETGET_STACK_FUNCS(stack_extent_flags, struct btrfs_extent_item, flags, 64)
BTRFS_SETGET_STACK_FUNCS(stack_tree_block_level, struct btrfs_tree_block_info, level, 8)
BTRFS_SETGET_STACK_FUNCS(stack_extent_inline_ref_type, struct btrfs_extent_inline_ref, type, 8)
BTRFS_SETGET_STACK_FUNCS(stack_extent_inline_ref_offset, struct btrfs_extent_inline_ref, offset, 64)
BTRFS_SETGET_STACK_FUNCS(stack_extent_data_ref_root, struct btrfs_extent_data_ref, root, 64)
BTRFS_SETGET_STACK_FUNCS(stack_extent_data_ref_objectid, struct btrfs_extent_data_ref, objectid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_extent_data_ref_offset, struct btrfs_extent_data_ref, offset, 64)
BTRFS_SETGET_STACK_FUNCS(stack_extent_data_ref_count, struct btrfs_extent_data_ref, count, 32)
BTRFS_SETGET_STACK_FUNCS(stack_shared_data_ref_count, struct btrfs_shared_data_ref, count, 32)

/* Balance item */
BTRFS_SETGET_STACK_FUNCS(balance_flags, struct btrfs_balance_item, flags, 64)
BTRFS_SETGET_STACK_FUNCS(balance_args_target, struct btrfs_disk_balance_args, target, 64)
BTRFS_SETGET_STACK_FUNCS(balance_args_flags, struct btrfs_disk_balance_args, flags, 64)

/* btrfs_dir_ftype(): the type without the fscrypt bit */
static inline u8 btrfs_stack_dir_ftype(const struct btrfs_dir_item *di)
{
	return btrfs_stack_dir_type(di) & ~BTRFS_FT_ENCRYPTED;
}

static inline void btrfs_disk_key_to_cpu(struct btrfs_key *cpu,
					 const struct btrfs_disk_key *disk)
{
	cpu->objectid = btrfs_disk_key_objectid(disk);
	cpu->type = btrfs_disk_key_type(disk);
	cpu->offset = btrfs_disk_key_offset(disk);
}

static inline u64 btrfs_sb_offset(int mirror)
{
	u64 start = 16 * 1024;

	if (mirror)
		return start << (BTRFS_SUPER_MIRROR_SHIFT * mirror);
	return BTRFS_SUPER_INFO_OFFSET;
}

static inline u32 btrfs_leaf_data_size(u32 nodesize)
{
	return nodesize - sizeof(struct btrfs_header);
}

static inline u32 btrfs_max_item_size(u32 nodesize)
{
	return btrfs_leaf_data_size(nodesize) - sizeof(struct btrfs_item);
}

static inline u32 btrfs_node_max_ptrs(u32 nodesize)
{
	return btrfs_leaf_data_size(nodesize) / sizeof(struct btrfs_key_ptr);
}

static inline u32 btrfs_chunk_item_size(u16 num_stripes)
{
	return offsetof(struct btrfs_chunk, stripe) +
	       (u32)num_stripes * sizeof(struct btrfs_stripe);
}

#endif
