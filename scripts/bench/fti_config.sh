# FTI's configuration as both FTI and mpcrs read it (mpcrs names in one line
# what it ignores: Node_size, Local_test, tags, ...); sourced by the bench
# scripts. FTI rewrites its file, so each run gets its own.
# fti_config FILE HEAD NODE_SIZE DIR GROUP: Ckpt_dir, Glbl_dir and Meta_dir
# under DIR; levels inline when HEAD is 0.
fti_config() {
  local inline=$(( $2 == 0 ? 1 : 0 ))
  cat > "$1" <<EOF_FTI
[basic]
Head = $2
Node_size = $3
Ckpt_dir = $4/local
Glbl_dir = $4/global
Meta_dir = $4/meta
Ckpt_L1 = 0
Ckpt_L2 = 0
Ckpt_L3 = 0
Ckpt_L4 = 0
Inline_L2 = $inline
Inline_L3 = $inline
Inline_L4 = 1
Keep_last_ckpt = 0
Group_size = $5
Verbosity = 2
Ckpt_io = 1
[restart]
Failure = 0
Exec_ID = XXXX-XX-XX_XX-XX-XX
[injection]
rank = 0
number = 0
position = 0
frequency = 0
[advanced]
Block_size = 1024
Transfer_size = 16
General_tag = 2612
Ckpt_tag = 711
Stage_tag = 406
Final_tag = 3107
Local_test = 1
EOF_FTI
}
