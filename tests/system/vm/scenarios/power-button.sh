# The power button ends standby. A laptop's power button (input_start)
# pressed in standby: the listener's Event=input Key=KEY_POWER rule leaves
# standby, and systemd-logind, which sees the same key and by default powers
# off, is held back by a handle-power-key inhibitor, as a desktop session
# holds one.
cat > /etc/standby/rules.d/30-power.rule <<'RULE'
[Match]
Event=input
Device=standby-vm-power
Key=KEY_POWER
Value=1
[Action]
ExitStandby=yes
RULE
check "the listener restarted with the power-button rule" systemctl restart standby-listener.service
check "logind holds a handle-power-key inhibitor" inhibit handle-power-key
journal_mark
check "the lid and the power button made" input_start
check "logind watches the power button" waitlog -u systemd-logind 'Watching system buttons on .* \(standby-vm-power\)'
check "the listener watches it" waitlog -u standby-listener.service 'Watching input .* \(standby-vm-power\)'
check "systemctl start standby.target" systemctl start standby.target
check "mail.service frozen" [ "$(freezer mail.service)" = frozen ]
journal_mark
check "the power button pressed" input power press
check "logind saw the power key" waitlog -u systemd-logind 'Power key pressed'
check "the power button ended standby" waitlog -u standby-leave.service 'Standby left\.$'
check "standby-manager status: inactive" sh -c "standby-manager status | grep -q '^Standby: inactive'"
check "standby.target inactive" wait_for inactive standby.target
check "mail.service running" wait_for running mail.service
