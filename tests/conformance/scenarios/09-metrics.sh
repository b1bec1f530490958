# Metrics from the job's log directory: a job writes TensorBoard scalars
# under tensorboard.log_path, on the volume the context names, and
# `metrics NAME` reads them.
scenario_metrics() {
    cf_job metrics met
    cf_submit met || return
    cf_expect_state "met ends SUCCEEDED" met "SUCCEEDED|FAILED" 60
    cf_run tj metrics met
    cf_rc "metrics met works" 0
    cf_grep "...showing the tag loss" "$TMP/out" "loss"
}
