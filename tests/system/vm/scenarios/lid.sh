# The lid: closed in standby it changes nothing, opened it ends standby
# (an Event=input Switch=SW_LID Value=0 rule); systemd-logind sees both,
# held back from suspending by a handle-lid-switch inhibitor. The listener
# handles one event at a time and logs each (--verbose) before acting on
# it, so its journal shows the close handled without ending standby.
cat > /etc/standby/rules.d/30-lid.rule <<'RULE'
[Match]
Event=input
Device=standby-vm-lid
Switch=SW_LID
Value=0
[Action]
ExitStandby=yes
RULE
mkdir -p /run/systemd/system/standby-listener.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/standby-listener --verbose\n' \
        > /run/systemd/system/standby-listener.service.d/verbose.conf
systemctl daemon-reload
check "the listener restarted with the lid rule" systemctl restart standby-listener.service
check "logind holds a handle-lid-switch inhibitor" inhibit handle-lid-switch
journal_mark
check "the lid and the power button made" input_start
check "logind watches the lid" waitlog -u systemd-logind 'Watching system buttons on .* \(standby-vm-lid\)'
check "the listener watches it" waitlog -u standby-listener.service 'Watching input .* \(standby-vm-lid\)'
check "systemctl start standby.target" systemctl start standby.target
check "mail.service frozen" [ "$(freezer mail.service)" = frozen ]
journal_mark
check "the lid closed" input lid close
check "logind saw it closed" waitlog -u systemd-logind 'Lid closed'
check "the listener read it" waitlog -u standby-listener.service "Input $VM_LID: SW_LID 1\$"
check "the lid opened" input lid open
check "the lid opened ended standby" waitlog -u standby-leave.service 'Standby left\.$'
check "logind saw it opened" waitlog -u systemd-logind 'Lid opened'
# The listener's lines since the close: the first "Ending standby" follows
# the opening.
lid_order() {
        journalctl -q -o cat --after-cursor="$vm_cursor" | grep -o -E "Input $VM_LID: SW_LID [01]$|Ending standby .*" |
                head -n 3 | diff -u - <(printf 'Input %s: SW_LID 1\nInput %s: SW_LID 0\nEnding standby (/etc/standby/rules.d/30-lid.rule).\n' "$VM_LID" "$VM_LID")
}
check "closing the lid did not end standby, opening it did" lid_order
check "mail.service running" wait_for running mail.service
