import { Avatar, type AvatarProps } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, errorText } from './api';
import { useSession } from './session';

/**
 * The signed-in person's picture as a `blob:` address of this page. It is read from
 * `GET /api/users/me/avatar` (this origin), not from `profilePictureUrl`, which with S3 storage is the
 * bucket's: the page's policy loads pictures from its own origin only. Read again when the stored
 * picture changes (its address without the signature is new for every upload).
 */
function useAvatarSource(): string | undefined {
  const { user } = useSession();
  const stored = user?.profilePictureUrl?.split('?')[0];
  const picture = useQuery({
    queryKey: ['avatar', stored],
    queryFn: async () => {
      const { data, error } = await api.GET('/api/users/me/avatar', { parseAs: 'blob' });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return data as unknown as Blob;
    },
    enabled: !!stored,
    staleTime: Infinity,
  });
  const [source, setSource] = useState<string>();
  const blob = stored ? picture.data : undefined;
  useEffect(() => {
    if (!blob) return setSource(undefined);
    const url = URL.createObjectURL(blob);
    setSource(url);
    return () => URL.revokeObjectURL(url);
  }, [blob]);
  return source;
}

/**
 * The person's picture, or their initials without one. `alt` names the picture; the initials are
 * decorative unless `initialsLabel` names them (the name or address is written beside them).
 */
export function UserAvatar({ alt, initialsLabel, ...props }: { alt: string; initialsLabel?: string } & Omit<AvatarProps, 'src' | 'alt' | 'name'>) {
  const { user } = useSession();
  const source = useAvatarSource();
  const initials = source ? {} : initialsLabel ? { role: 'img', 'aria-label': initialsLabel } : { 'aria-hidden': true };
  return <Avatar {...props} {...initials} src={source} alt={alt} name={user?.name || user?.email} color="initials" />;
}
